// Small helpers shared by the in-process benchmarks (policy, review): timing, and one child process per
// measured size so that each size's peak RSS is its own.
import { execFileSync } from 'node:child_process';

/** The median of `values` (the upper one of the two middle values for an even count). */
export const median = (values: readonly number[]): number =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** Runs `fn` and returns its value with the wall time it took, in milliseconds. */
export function timed<T>(fn: () => T): { value: T; ms: number } {
  const start = performance.now();
  const value = fn();
  return { value, ms: performance.now() - start };
}

/**
 * Runs `<script> <bench> --fraction <f>` in a child process and parses the JSON sample it prints last.
 * @example sampleInChild<PolicyBenchSample>(script, 'policy', 0.25)
 */
export function sampleInChild<T>(script: string, bench: string, fraction: number): T {
  const out = execFileSync(
    process.execPath,
    [...process.execArgv, script, bench, '--fraction', String(fraction)],
    {
      encoding: 'utf8',
      maxBuffer: 16 * 1024 * 1024,
    },
  );
  return JSON.parse(out.trim().split('\n').pop()!) as T;
}

/**
 * Median CPU microseconds per call of each variant (this process's user + system time, so other processes
 * on a loaded machine do not count), run in alternating rounds of `perRound` calls so drift hits all alike;
 * the first round warms the JIT and is not counted.
 * @example compareCpuPerCall({ today: () => f(x), legacy: () => g(x) }, 10, 300)
 */
export function compareCpuPerCall(
  variants: Readonly<Record<string, () => unknown>>,
  rounds: number,
  perRound: number,
): Record<string, number> {
  const samples = new Map<string, number[]>(Object.keys(variants).map((k) => [k, []]));
  for (let round = 0; round <= rounds; round++) {
    for (const [name, fn] of Object.entries(variants)) {
      const start = process.cpuUsage();
      for (let i = 0; i < perRound; i++) fn();
      const used = process.cpuUsage(start);
      if (round > 0) samples.get(name)!.push((used.user + used.system) / perRound);
    }
  }
  return Object.fromEntries([...samples].map(([k, v]) => [k, Math.round(median(v) * 10) / 10]));
}
