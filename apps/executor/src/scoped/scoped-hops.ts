// The hops of one scoped execution, timed as it goes (docs/ephemeral-access.md, "Where the time goes"): the
// histogram's stages and the fields of the one log line per execution.
import type { ScopedStage } from '../execution/dispatch.js';

/** Milliseconds per hop of one scoped execution, filled in as it goes. */
export type Hops = Partial<Record<ScopedStage, number>>;

/** Starts timing hops: `lap(stage)` records the time since the previous lap under `stage`. */
export function stopwatch(hops: Hops): (stage: ScopedStage) => void {
  let last = performance.now();
  return (stage) => {
    const now = performance.now();
    hops[stage] = Math.round((now - last) * 10) / 10;
    last = now;
  };
}

/** `database_wait` -> `databaseWait`. */
export function camel(stage: string): string {
  return stage.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase());
}
