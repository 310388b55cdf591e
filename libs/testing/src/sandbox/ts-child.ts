// Starts a TypeScript entry file as a child process through the swc hooks, for tests that need real
// processes (kill a consumer mid-message, run replicas, run the demo) without a build step.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The --import argument that makes a child process run .ts sources. */
export const TS_REGISTER = path.join(path.dirname(fileURLToPath(import.meta.url)), 'ts-register.mjs');

/** Options of {@link spawnTs}. */
export type SpawnTsOptions = {
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly args?: readonly string[];
  /** Called with each stdout line (the child's protocol with the test). */
  readonly onLine?: (line: string) => void;
};

/** Runs `node --import ts-register.mjs <entry> ...args` with the given extra environment. */
export function spawnTs(entry: string, options: SpawnTsOptions = {}): ChildProcess {
  const child = spawn(
    process.execPath,
    ['--no-warnings', '--import', TS_REGISTER, entry, ...(options.args ?? [])],
    {
      env: { ...process.env, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let buffer = '';
  child.stdout?.setEncoding('utf8');
  child.stdout?.on('data', (chunk: string) => {
    buffer += chunk;
    let newline = buffer.indexOf('\n');
    while (newline >= 0) {
      options.onLine?.(buffer.slice(0, newline));
      buffer = buffer.slice(newline + 1);
      newline = buffer.indexOf('\n');
    }
  });
  child.stderr?.resume();
  return child;
}
