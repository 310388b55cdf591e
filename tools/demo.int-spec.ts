// `npm run demo` shows five healthy services and runs the reconcile loop: the demo is run to completion
// (--exit-when-done) from source; it must list every service healthy, converge the auto policy, apply the
// manually approved plan, print the roles read back from PostgreSQL, then exit 0.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, spawnTs } from '@rolepolicy/testing';

const DEMO = path.join(path.dirname(fileURLToPath(import.meta.url)), 'demo.ts');
const SERVICES = ['k8s-gateway', 'inspector', 'planner', 'executor', 'access-scheduler'];

describe('npm run demo', () => {
  it('boots the five services against the local servers and prints each one healthy with its metrics URL', async () => {
    const base = await freePort();
    const lines: string[] = [];
    const child = spawnTs(DEMO, {
      args: ['--exit-when-done'],
      // A loaded CI machine compiles five processes from source at once; the 30 s default is for `npm run demo`.
      env: {
        DEMO_HTTP_PORT_BASE: String(base),
        DEMO_HEALTH_TIMEOUT_MS: '120000',
        DEMO_STEP_TIMEOUT_MS: '40000',
        LOG_LEVEL: 'error',
      },
      onLine: (line) => lines.push(line),
    });
    const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
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
    // The loop: the auto policy converges, the manual plan waits, is approved and applied.
    expect(output).toMatch(/shop: Ready=True\/Reconciled/);
    expect(output).toMatch(/audit: Ready=True\/Planned, plan audit-[0-9a-f]{12} Pending/);
    expect(output).toMatch(/approving audit-[0-9a-f]{12} as demo@rolepolicy.io/);
    expect(output).toMatch(/audit: Ready=True\/Reconciled/);
    expect(output).toMatch(/demo_[0-9a-f]+_app +login=yes member of \[demo_[0-9a-f]+_orders_editor\]/);
    expect(output).toContain('demo loop complete');
    // The generated password never reaches the output (SQL previews are redacted).
    expect(output).not.toMatch(/PASSWORD '(?!\[REDACTED\])/);
    expect(code).toBe(0);
  }, 180_000);
});
