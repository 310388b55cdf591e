// `kubectl rolepolicy ...` as a person runs it: the real /usr/bin/kubectl finds `kubectl-rolepolicy` on
// PATH (plugin discovery) and runs it with the person's arguments and KUBECONFIG. The script on PATH starts
// the plugin from source through the TypeScript hooks, so no build is needed.
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { TS_REGISTER } from '@rolepolicy/testing';

const ENTRY = resolve(process.cwd(), 'apps/cli/src/plugin-entry.ts');

/** What one run printed and how it ended. */
export type PluginResult = { readonly code: number; readonly stdout: string; readonly stderr: string };

/** A person of {@link peopleKubeconfig}: the context name, the user and the bearer token. */
export type Person = { readonly context: string; readonly username: string; readonly token: string };

/**
 * One kubeconfig with a context per person on the API at `server` (the first is current); `caPem` is the
 * API's certificate (an enforcing emulator serves HTTPS), else TLS verification is off (plain HTTP).
 */
export function peopleKubeconfig(
  server: string,
  namespace: string,
  people: readonly Person[],
  caPem: string | undefined,
): string {
  const cluster = caPem
    ? `certificate-authority-data: ${Buffer.from(caPem).toString('base64')}`
    : 'insecure-skip-tls-verify: true';
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    `- name: api\n  cluster:\n    server: ${server}\n    ${cluster}`,
    'users:',
    ...people.map((p) => `- name: ${p.username}\n  user:\n    token: ${p.token}`),
    'contexts:',
    ...people.map(
      (p) =>
        `- name: ${p.context}\n  context:\n    cluster: api\n    user: ${p.username}\n    namespace: ${namespace}`,
    ),
    `current-context: ${people[0]?.context ?? ''}`,
    '',
  ].join('\n');
}

/** The plugin installed in a private PATH directory, with its own kubeconfig. */
export class KubectlPlugin {
  private readonly dir = mkdtempSync(join(tmpdir(), 'rp-plugin-'));
  private readonly binDir = join(this.dir, 'bin');
  readonly kubeconfigPath = join(this.dir, 'kubeconfig');

  constructor(kubeconfig: string) {
    writeFileSync(this.kubeconfigPath, kubeconfig, { mode: 0o600 });
    mkdirSync(this.binDir);
    const script = join(this.binDir, 'kubectl-rolepolicy');
    writeFileSync(
      script,
      `#!/bin/sh\nexec "${process.execPath}" --no-warnings --import "${TS_REGISTER}" "${ENTRY}" "$@"\n`,
    );
    chmodSync(script, 0o755);
  }

  /** Runs `kubectl rolepolicy <args>`; the plugin polls --wait every 200 ms. */
  run(args: readonly string[], stdin = ''): Promise<PluginResult> {
    return new Promise((done, fail) => {
      const child = spawn('/usr/bin/kubectl', ['rolepolicy', ...args], {
        env: {
          ...process.env,
          PATH: `${this.binDir}:${process.env['PATH'] ?? ''}`,
          KUBECONFIG: this.kubeconfigPath,
          ROLEPOLICY_POLL_MS: '200',
        },
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
      child.on('error', fail);
      child.on('close', (code) => done({ code: code ?? 1, stdout, stderr }));
      child.stdin.end(stdin);
    });
  }

  /** Runs and returns stdout; throws with both streams when the exit code is not `expected`. */
  async ok(args: readonly string[], expected = 0, stdin = ''): Promise<string> {
    const result = await this.run(args, stdin);
    if (result.code !== expected) {
      throw new Error(
        `kubectl rolepolicy ${args.join(' ')} exited ${result.code} (expected ${expected})\nstdout: ${result.stdout}\nstderr: ${result.stderr}`,
      );
    }
    return result.stdout;
  }

  /** Removes the PATH directory and the kubeconfig. */
  dispose(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}
