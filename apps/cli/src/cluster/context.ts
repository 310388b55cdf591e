// What every cluster command shares: the connection flags, the -o choice, printing results as kubectl
// does (summary to stdout for people, to stderr when stdout is a machine format), and polling for --wait.
import type { Kind } from '@rolepolicy/kube';
import { parseEphemeralDuration } from '@rolepolicy/policy';

import { CliError, EXIT, type CliIo } from '../io.js';
import {
  connectCluster,
  resourceName,
  type Cluster,
  type KubeObject,
  type KubeOptions,
} from './kube-client.js';
import { formatObjects, OUTPUT_FORMATS, type OutputFormat } from './table.js';

/** Flags of every cluster command (connection, output, --wait). */
export interface ClusterFlags extends KubeOptions {
  readonly output?: string;
  readonly wait?: boolean;
  readonly timeout?: string;
}

/** A cluster command's world: the API, the streams, the clock. */
export interface ClusterContext {
  readonly cluster: Cluster;
  readonly io: CliIo;
  readonly output: OutputFormat;
  readonly now: () => Date;
  /** Poll interval of --wait (tests shorten it). */
  readonly pollMs: number;
}

/** Checks -o and connects; -o values other than {@link OUTPUT_FORMATS} are usage errors. */
export function clusterContext(flags: ClusterFlags, io: CliIo): ClusterContext {
  const output = (flags.output ?? 'table') as OutputFormat;
  if (!OUTPUT_FORMATS.includes(output)) {
    throw new CliError(
      `-o/--output: must be one of ${OUTPUT_FORMATS.join('|')}, got "${flags.output}"`,
      EXIT.usage,
    );
  }
  return {
    cluster: connectCluster(flags),
    io,
    output,
    now: () => new Date(),
    pollMs: Number(io.env['ROLEPOLICY_POLL_MS'] ?? '') || 1000,
  };
}

/** Lines a person reads: stdout normally, stderr when stdout carries json/yaml/name. */
export function say(ctx: ClusterContext, lines: readonly string[]): void {
  const text = lines.map((line) => `${line}\n`).join('');
  if (ctx.output === 'table' || ctx.output === 'wide') ctx.io.stdout(text);
  else ctx.io.stderr(text);
}

/** Prints the written object: `<resource>/<name> <verb>` or the object in the -o format. */
export function printWritten(ctx: ClusterContext, kind: Kind, object: KubeObject, verb: string): void {
  if (ctx.output === 'table' || ctx.output === 'wide') {
    ctx.io.stdout(`${resourceName(kind)}/${object.metadata.name ?? ''} ${verb}\n`);
  } else {
    ctx.io.stdout(formatObjects([object], ctx.output, resourceName(kind), false));
  }
}

/** Parses --timeout (`90s`, `5m`, `1h30m`: the spec's duration pattern) into milliseconds; default 5 minutes. */
export function timeoutMs(text: string | undefined): number {
  if (text === undefined) return 5 * 60_000;
  const parsed = parseEphemeralDuration(text);
  if (!parsed.ok) throw new CliError(`--timeout: ${parsed.message}`, EXIT.usage);
  return parsed.seconds * 1000;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Reads until `settled` says the outcome is there (returns it), or the timeout passes (returns the
 * last value read, `reached: false`).
 */
export async function pollUntil<T>(
  ctx: ClusterContext,
  read: () => Promise<T>,
  settled: (value: T) => boolean,
  limitMs: number,
): Promise<{ readonly reached: boolean; readonly value: T }> {
  const deadline = Date.now() + limitMs;
  for (;;) {
    const value = await read();
    if (settled(value)) return { reached: true, value };
    if (Date.now() >= deadline) return { reached: false, value };
    await sleep(Math.min(ctx.pollMs, Math.max(0, deadline - Date.now())));
  }
}
