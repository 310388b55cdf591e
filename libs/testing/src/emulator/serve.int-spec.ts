// The standalone emulator process: it prints its kubeconfig, kubectl can use it, and SIGTERM stops it.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnTs } from '../sandbox/ts-child.js';
import { kubectlFor } from './kubectl-runner.js';
import { eventually } from './test-support.js';

const entry = fileURLToPath(new URL('./serve.ts', import.meta.url));
const crdDir = fileURLToPath(new URL('../../../../deploy/crds', import.meta.url));

test('serve.ts starts an emulator with the CRDs that kubectl can list, and stops on SIGTERM', async () => {
  const lines: string[] = [];
  const child = spawnTs(entry, { args: ['--crds', crdDir], onLine: (l) => lines.push(l) });
  try {
    const kubeconfig = await eventually('the kubeconfig line', () =>
      lines.find((l) => l.startsWith('kubeconfig '))?.slice('kubeconfig '.length),
    );
    const out = await new Promise<string>((resolve, reject) =>
      execFile(
        '/usr/bin/kubectl',
        ['get', 'crds', '-o', 'name'],
        { env: { ...process.env, KUBECONFIG: kubeconfig } },
        (err, stdout) => (err ? reject(err) : resolve(stdout)),
      ),
    );
    expect(out).toContain('customresourcedefinition.apiextensions.k8s.io/postgrespolicies.rolepolicy.io');
  } finally {
    child.kill('SIGTERM');
  }
  const code =
    child.exitCode ?? (await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c))));
  expect(code).toBe(0);
}, 60_000);

test('serve.ts --token-auth-file authenticates the file’s users over HTTPS', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'rp-serve-tokens-'));
  const tokens = join(dir, 'tokens.csv');
  await writeFile(tokens, 'alice-token,alice,u-1,"team-a,approvers"\n');
  const lines: string[] = [];
  const child = spawnTs(entry, { args: ['--token-auth-file', tokens], onLine: (l) => lines.push(l) });
  try {
    const kubeconfig = await eventually('the kubeconfig line', () =>
      lines.find((l) => l.startsWith('kubeconfig '))?.slice('kubeconfig '.length),
    );
    expect(lines.find((l) => l.startsWith('url '))).toMatch(/^url https:\/\/127\.0\.0\.1:\d+$/);
    const kubectl = kubectlFor(kubeconfig, dir);
    expect(await kubectl.ok('auth', 'whoami', '--token', 'alice-token')).toMatch(
      /Username\s+alice\n.*UID\s+u-1\n.*Groups\s+\[team-a approvers system:authenticated\]/s,
    );
    expect((await kubectl.run('get', 'ns', '--token', 'wrong')).stderr).toContain(
      'error: You must be logged in to the server',
    );
  } finally {
    child.kill('SIGTERM');
    await rm(dir, { recursive: true, force: true });
  }
}, 60_000);
