// kubectl (1.32, a client nobody here wrote) against a stack's API emulator, the way a cluster user
// drives the product: apply manifests from stdin, read fields with jsonpath, patch status, delete.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** What one kubectl run printed and how it ended. */
export type KubectlResult = { readonly code: number; readonly stdout: string; readonly stderr: string };

/** Runs kubectl against one kubeconfig and namespace; {@link Kubectl.dispose} removes its cache. */
export class Kubectl {
  private readonly cacheDir = mkdtempSync(join(tmpdir(), 'rp-kubectl-'));

  constructor(
    private readonly kubeconfigPath: () => string,
    private readonly namespace: string,
    private readonly binary = '/usr/bin/kubectl',
  ) {}

  /** Runs `kubectl <args> -n <namespace>`, writing `input` to its stdin. */
  run(args: readonly string[], input?: string): Promise<KubectlResult> {
    return new Promise((resolve, reject) => {
      const child = spawn(this.binary, [...args, '-n', this.namespace, '--cache-dir', this.cacheDir], {
        env: { ...process.env, KUBECONFIG: this.kubeconfigPath() },
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
      child.stdin.end(input ?? '');
    });
  }

  /** Runs kubectl and returns stdout; throws with stderr when it exits non-zero. */
  async ok(args: readonly string[], input?: string): Promise<string> {
    const result = await this.run(args, input);
    if (result.code !== 0)
      throw new Error(`kubectl ${args.join(' ')} failed (${result.code}): ${result.stderr}`);
    return result.stdout;
  }

  /** `kubectl apply -f -` of a YAML document. */
  apply(yaml: string): Promise<KubectlResult> {
    return this.run(['apply', '-f', '-'], yaml);
  }

  /** `kubectl get <resource> <name> -o jsonpath=<path>` ('' when the object or the path is absent). */
  async jsonpath(resource: string, name: string, path: string): Promise<string> {
    const result = await this.run(['get', resource, name, '-o', `jsonpath=${path}`]);
    return result.code === 0 ? result.stdout : '';
  }

  /** Creates or replaces a generic Secret from literals, as `create --dry-run=client | apply` does. */
  async upsertSecret(name: string, literals: Readonly<Record<string, string>>): Promise<void> {
    const args = ['create', 'secret', 'generic', name, '--dry-run=client', '-o', 'yaml'];
    for (const [key, value] of Object.entries(literals)) args.push(`--from-literal=${key}=${value}`);
    const manifest = await this.ok(args);
    await this.ok(['apply', '-f', '-'], manifest);
  }

  /** Removes the discovery cache directory. */
  dispose(): void {
    rmSync(this.cacheDir, { recursive: true, force: true });
  }
}
