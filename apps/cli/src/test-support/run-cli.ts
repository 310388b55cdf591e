// Runs `rolepolicy` as a real child process (from source, through the TypeScript hooks) and captures
// its exit code and both streams, optionally feeding stdin.

import { spawn } from 'node:child_process';
import path from 'node:path';

import { TS_REGISTER } from '@rolepolicy/testing';

const ENTRY = path.resolve(process.cwd(), 'apps/cli/src/cli-entry.ts');

/** What a CLI run produced. */
export interface CliRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the CLI with `args`; `env` is added to a minimal environment (no inherited DATABASE_URL). */
export function runCli(
  args: readonly string[],
  options: { env?: Record<string, string>; stdin?: string } = {},
): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--no-warnings', '--import', TS_REGISTER, ENTRY, ...args], {
      env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(options.stdin ?? '');
  });
}
