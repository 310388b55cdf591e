// `npm run stack` as a person uses it: start it, take the printed `export KUBECONFIG=…` line, drive the
// embedded API with real kubectl imperative commands, kill one of its services and see it come back
// with the cluster state intact, then Ctrl-C (SIGINT) for a clean exit.
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { eventually, freePortBlock, kubectlFor, spawnTs, startPrivateNatsServer } from '@rolepolicy/testing';

import { SERVICES } from './local-stack.js';

const STACK = path.join(path.dirname(fileURLToPath(import.meta.url)), 'stack.ts');

test('npm run stack serves kubectl, restarts a killed service with the cluster state kept, and stops on SIGINT', async () => {
  const base = await freePortBlock(SERVICES.length);
  // The services' streams on a private broker: the shared one on 4222 may hold other runs' consumers.
  const nats = await startPrivateNatsServer();
  const cacheDir = await mkdtemp(path.join(tmpdir(), 'rp-stack-kubectl-'));
  const lines: string[] = [];
  const child = spawnTs(STACK, {
    env: {
      NATS_URL: nats.url,
      STACK_HTTP_PORT_BASE: String(base),
      STACK_HEALTH_TIMEOUT_MS: '150000',
      LOG_LEVEL: 'error',
    },
    onLine: (line) => lines.push(line),
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  try {
    await eventually(
      'the stack to be ready',
      () => lines.some((l) => l.includes('[stack] running')),
      170_000,
    );
    const exportLine = lines.find((l) => l.startsWith('export KUBECONFIG='))!;
    const kubeconfigPath = exportLine.slice('export KUBECONFIG='.length);
    const kubectl = kubectlFor(kubeconfigPath, cacheDir);
    expect(lines.join('\n')).toContain('5/5 services ready');
    for (const [i, service] of [
      'k8s-gateway',
      'inspector',
      'planner',
      'executor',
      'access-scheduler',
    ].entries()) {
      const row = lines.find((l) => l.startsWith(`${service} `));
      expect(row).toMatch(/^\S+\s+\d+\s+200\s+200\s/);
      expect(row).toContain(`http://127.0.0.1:${base + i}/healthz`);
      expect(row).toContain(`http://127.0.0.1:${base + i}/metrics`);
    }
    // Beside its health URLs, the access-scheduler's row names its Bull Board, and the board answers there.
    const board = `http://127.0.0.1:${base + 4}/queues`;
    expect(lines.find((l) => l.startsWith('access-scheduler '))).toContain(
      `${board} (Bull Board, read-only)`,
    );
    const page = await fetch(board);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');

    expect((await kubectl.ok('get', 'crds', '-o', 'name')).trim().split('\n')).toHaveLength(5);
    // The printed PATH line puts the plugin where kubectl finds it: `kubectl rolepolicy` without npm link.
    const binDir = lines
      .find((l) => l.startsWith('export PATH='))!
      .slice('export PATH='.length)
      .split(':')[0]!;
    const whoami = await promisify(execFile)('/usr/bin/kubectl', ['rolepolicy', 'whoami', '--as=alice'], {
      env: { ...process.env, PATH: `${binDir}:${process.env['PATH'] ?? ''}`, KUBECONFIG: kubeconfigPath },
    });
    expect(whoami.stdout).toContain('alice');
    expect(await kubectl.ok('create', 'namespace', 'team-a')).toBe('namespace/team-a created\n');
    expect(
      await kubectl.ok(
        'create',
        'secret',
        'generic',
        'orders-admin',
        '-n',
        'team-a',
        '--from-literal=password=pw-1',
      ),
    ).toBe('secret/orders-admin created\n');
    expect(await kubectl.ok('create', 'configmap', 'notes', '-n', 'team-a', '--from-literal=k=v')).toBe(
      'configmap/notes created\n',
    );
    expect(await kubectl.ok('label', 'secret', 'orders-admin', '-n', 'team-a', 'owner=orders')).toBe(
      'secret/orders-admin labeled\n',
    );
    expect(await kubectl.ok('annotate', 'configmap', 'notes', '-n', 'team-a', 'why=test')).toBe(
      'configmap/notes annotated\n',
    );
    expect(
      await kubectl.ok(
        'patch',
        'configmap',
        'notes',
        '-n',
        'team-a',
        '--type=merge',
        '-p',
        '{"data":{"k":"w"}}',
      ),
    ).toBe('configmap/notes patched\n');
    expect(
      await kubectl.ok(
        'get',
        'configmap',
        'notes',
        '-n',
        'team-a',
        '-o',
        'jsonpath={.data.k} {.metadata.annotations.why}',
      ),
    ).toBe('w test');
    expect(await kubectl.ok('delete', 'configmap', 'notes', '-n', 'team-a')).toBe(
      'configmap "notes" deleted\n',
    );
    // The API enforces RBAC by default: the admin may act as alice, who holds nothing.
    expect(await kubectl.ok('auth', 'whoami', '--as=alice')).toMatch(/Username\s+alice/);
    expect((await kubectl.run('get', 'secrets', '-n', 'team-a', '--as=alice')).stderr).toContain(
      'secrets is forbidden: User "alice" cannot list resource "secrets" in API group "" in the namespace "team-a"',
    );

    // Kill the planner the way a crash would; the stack starts it again on the same port.
    const plannerRow = lines.find((l) => l.startsWith('planner '))!;
    const pid = Number(plannerRow.split(/\s+/)[1]);
    process.kill(pid, 'SIGKILL');
    await eventually(
      'the planner to be restarted',
      () => lines.some((l) => l.startsWith('[stack] planner restarted')),
      30_000,
    );
    await eventually(
      'the restarted planner to be ready',
      async () => (await fetch(`http://127.0.0.1:${base + 2}/readyz`).catch(() => undefined))?.status === 200,
      150_000,
    );
    // The cluster kept its state across the service restart.
    expect(
      await kubectl.ok(
        'get',
        'secret',
        'orders-admin',
        '-n',
        'team-a',
        '-o',
        'jsonpath={.metadata.labels.owner}',
      ),
    ).toBe('orders');
  } finally {
    child.kill('SIGINT');
    const code = await exited;
    await nats.dispose();
    await rm(cacheDir, { recursive: true, force: true });
    expect(lines).toContain('[stack] stopped');
    expect(code).toBe(0);
  }
}, 400_000);
