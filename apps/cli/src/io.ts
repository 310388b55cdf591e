// The CLI's view of the outside world (streams, environment, TTY), passed in so commands are testable
// and so nothing writes to a stream the command did not choose.

import type { Readable } from 'node:stream';

/** Streams and environment a command runs with. */
export interface CliIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly stdin: Readable;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** True when stdin and stdout are terminals (interactive confirmation is possible). */
  readonly interactive: boolean;
}

/**
 * Exit codes: 0 ok/converged, 1 error, 2 invalid policy (validate) or changes pending (plan). The cluster
 * commands (`kubectl rolepolicy`) add: 2 usage (bad command, flag or value), 3 refused (not found,
 * forbidden, invalid, already decided, window expired), 4 waited without the outcome (--wait).
 */
export const EXIT = { ok: 0, error: 1, pending: 2, invalid: 2, usage: 2, refused: 3, notReached: 4 } as const;

/** An error whose message is safe to print as is (no secrets), with the exit code it maps to. */
export class CliError extends Error {
  override readonly name = 'CliError';
  constructor(
    message: string,
    readonly exitCode: number = EXIT.error,
  ) {
    super(message);
  }
}

/** The real process streams. */
export function processIo(): CliIo {
  return {
    stdout: (text) => void process.stdout.write(text),
    stderr: (text) => void process.stderr.write(text),
    stdin: process.stdin,
    env: process.env,
    interactive: Boolean(process.stdin.isTTY && process.stdout.isTTY),
  };
}
