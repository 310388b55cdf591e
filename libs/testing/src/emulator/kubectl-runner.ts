// Runs the real kubectl (/usr/bin/kubectl) against an emulator, for tests that drive it as a person would.
import { execFile } from 'node:child_process';

/** Where kubectl lives on the project's machines. */
export const KUBECTL = '/usr/bin/kubectl';

/** Exit code and output of one kubectl run. */
export type KubectlResult = { readonly code: number; readonly stdout: string; readonly stderr: string };

/** A kubectl bound to one kubeconfig (and discovery cache directory). */
export type Kubectl = {
  /** Runs kubectl and resolves with its result, whatever the exit code. */
  run(...args: string[]): Promise<KubectlResult>;
  /** Runs kubectl and resolves with stdout; rejects with stderr when it exits non-zero. */
  ok(...args: string[]): Promise<string>;
};

/** kubectl with KUBECONFIG set to `kubeconfigPath`; `stdin` is fed to the process when given. */
export function kubectlFor(kubeconfigPath: string, cacheDir: string): Kubectl {
  const run = (...args: string[]): Promise<KubectlResult> =>
    new Promise((resolve) => {
      execFile(
        KUBECTL,
        [...args, '--cache-dir', cacheDir],
        { env: { ...process.env, KUBECONFIG: kubeconfigPath } },
        (error, stdout, stderr) => {
          const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
          resolve({ code, stdout, stderr });
        },
      );
    });
  return {
    run,
    async ok(...args: string[]): Promise<string> {
      const result = await run(...args);
      if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed: ${result.stderr}`);
      return result.stdout;
    },
  };
}
