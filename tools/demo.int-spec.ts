// `npm run demo` shows five healthy services: the demo is run to completion (--exit-when-healthy) from
// source and must list every service with healthz/readyz 200 and its metrics URL, then exit 0.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, freePortBlock, spawnTs, startPrivateNatsServer } from '@rolepolicy/testing';

const DEMO = path.join(path.dirname(fileURLToPath(import.meta.url)), 'demo.ts');
const SERVICES = ['k8s-gateway', 'inspector', 'planner', 'executor', 'access-scheduler'];

describe('npm run demo', () => {
  it('boots the five services against the local servers and prints each one healthy with its metrics URL', async () => {
    const base = await freePortBlock(SERVICES.length);
    // The services' streams, durables and leader lease on a private broker: integration files run side by
    // side, and the shared one on 4222 may hold other runs' consumers and leases.
    const nats = await startPrivateNatsServer();
    const lines: string[] = [];
    const child = spawnTs(DEMO, {
      args: ['--exit-when-healthy'],
      // A loaded CI machine compiles five processes from source at once; the 30 s default is for `npm run demo`.
      env: {
        NATS_URL: nats.url,
        DEMO_HTTP_PORT_BASE: String(base),
        DEMO_HEALTH_TIMEOUT_MS: '150000',
        LOG_LEVEL: 'error',
      },
      onLine: (line) => lines.push(line),
    });
    const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
    await nats.dispose();
    const output = lines.join('\n');

    expect(output).toContain('5/5 services healthy');
    SERVICES.forEach((service, i) => {
      const row = lines.find((l) => l.startsWith(`${service} `));
      expect(row).toMatch(/ 200 +200 +nats up/);
      expect(row).toContain(`http://127.0.0.1:${base + i}/metrics`);
    });
    expect(lines.find((l) => l.startsWith('access-scheduler '))).toContain('redis up');
    // The gateway is ready only against a cluster: the demo's embedded API emulator.
    expect(output).toMatch(/embedded Kubernetes API: http:\/\/127\.0\.0\.1:\d+/);
    expect(lines.find((l) => l.startsWith('k8s-gateway '))).toContain('kubernetes up');
    expect(code).toBe(0);
  }, 180_000);

  it('with nothing on the configured PostgreSQL port, starts the embedded server and completes the demo loop', async () => {
    const base = await freePortBlock(SERVICES.length);
    const closed = await freePort();
    // The services' streams on a private broker: the shared one on 4222 may hold other runs' consumers.
    const nats = await startPrivateNatsServer();
    const lines: string[] = [];
    const child = spawnTs(DEMO, {
      args: ['--exit-when-done'],
      env: {
        NATS_URL: nats.url,
        DEMO_HTTP_PORT_BASE: String(base),
        DEMO_HEALTH_TIMEOUT_MS: '150000',
        // Each loop step (a plan applied, drift repaired) on a loaded CI machine; 60 s by default.
        DEMO_STEP_TIMEOUT_MS: '150000',
        // Long enough that the Active grant is seen between two polls of a loaded machine.
        DEMO_EPHEMERAL_SECONDS: '30',
        LOG_LEVEL: 'error',
        RP_TEST_PG_URL: `postgres://postgres@127.0.0.1:${closed}/postgres`,
      },
      onLine: (line) => lines.push(line),
    });
    const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
    await nats.dispose();
    const output = lines.join('\n');
    expect(output).toMatch(
      new RegExp(
        `started PostgreSQL 15 \\(embedded, pinned npm package\\) on 127\\.0\\.0\\.1:\\d+: nothing listened on 127\\.0\\.0\\.1:${closed}`,
      ),
    );
    expect(output).toContain('5/5 services healthy');
    // The candidate step: a proposal planned, approved, merged and promoted (the approved plan applied).
    expect(output).toMatch(/audit-reader: phase Promoted, Promoted=True\/Promoted, plan Applied/);
    // The ephemeral step, after the policy steps and the read-back: the access policy accepted, the membership
    // absent, granted while the request is Active, and revoked once it Ended; the demo ends on the revocation.
    const at = (pattern: RegExp): number => {
      const index = lines.findIndex((l) => pattern.test(l));
      expect({ pattern: String(pattern), found: index >= 0 }).toEqual({
        pattern: String(pattern),
        found: true,
      });
      return index;
    };
    const steps = [
      at(/^4\. roles, memberships and privileges read back from PostgreSQL:/),
      at(/^5\. ephemeral access: (\S+) gets (\S+billing_viewer) for 30 s/),
      at(/pg_auth_members before the request: \S+_app is not a member of \S+_billing_viewer$/),
      at(/access policy billing-read: Accepted=True\/\S+, resolvedRoles \[\S+_billing_viewer\]/),
      at(/request app-billing: phase Active, .*Applied=True\/MembershipsGranted, expiresAt \S+/),
      at(/pg_auth_members while Active: \S+_app is a member of \S+_billing_viewer \(admin_option false\)/),
      at(/timer queues \(Bull Board, read-only\): http:\/\/127\.0\.0\.1:\d+\/queues/),
      at(/request app-billing: phase Ended, .*Applied=False\/MembershipsRevoked, expiresAt \S+, endedAt \S+/),
      at(/pg_auth_members after expiry: \S+_app is not a member of \S+_billing_viewer$/),
      at(/membership revoked: \S+_app no longer holds \S+_billing_viewer/),
      at(/^demo loop complete$/),
    ];
    expect(steps).toEqual([...steps].sort((a, b) => a - b));
    expect(lines.find((l) => l.includes('timer queues (Bull Board'))).toContain(
      `http://127.0.0.1:${base + 4}/queues`,
    );
    // The demo's own output ends on the revocation: nothing but blank or service (`[name] `) lines between.
    expect(
      lines.slice(steps.at(-2)! + 1, steps.at(-1)).filter((l) => l.trim() !== '' && !l.startsWith('[')),
    ).toEqual([]);
    expect(code).toBe(0);
  }, 600_000);
});
