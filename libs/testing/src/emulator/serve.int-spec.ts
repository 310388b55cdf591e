// The standalone emulator process: it prints its kubeconfig, kubectl can use it, and SIGTERM stops it.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { spawnTs } from '../sandbox/ts-child.js';
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
