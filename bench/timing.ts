// Small timing helpers shared by the in-process benchmarks (policy, review).

/** The median of `values` (the upper one of the two middle values for an even count). */
export const median = (values: readonly number[]): number =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** Runs `fn` and returns its value with the wall time it took, in milliseconds. */
export function timed<T>(fn: () => T): { value: T; ms: number } {
  const start = performance.now();
  const value = fn();
  return { value, ms: performance.now() - start };
}
