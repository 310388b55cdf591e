// A progress write only when someone could see it: a status that says "working on it" is worth an API
// write when the work takes long enough for a person (or a dashboard) to look, not when the final status
// follows within the same second (issue 28: API writes per converged policy).

/** Timer functions (injectable so tests decide when the delay has passed). */
export interface AnnounceTimers {
  readonly set: (fire: () => void, ms: number) => unknown;
  readonly clear: (handle: unknown) => void;
}

const REAL_TIMERS: AnnounceTimers = {
  set: (fire, ms) => setTimeout(fire, ms),
  clear: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/**
 * Runs `work`; if it is still running after `afterMs`, runs `announce` beside it. Resolves with the work's
 * result once both are done, so whatever the caller writes next comes after the announcement. The
 * announcement's failure fails the call (after the work ended), as if it had been awaited first.
 * @example await announceIfSlow(() => inspect(), () => writeStatus(reconciling), 1_000)
 */
export async function announceIfSlow<T>(
  work: () => Promise<T>,
  announce: () => Promise<void>,
  afterMs: number,
  timers: AnnounceTimers = REAL_TIMERS,
): Promise<T> {
  let announced: Promise<{ failed: false } | { failed: true; error: unknown }> | undefined;
  const handle = timers.set(() => {
    announced = announce().then(
      () => ({ failed: false }) as const,
      (error: unknown) => ({ failed: true, error }) as const,
    );
  }, afterMs);
  try {
    return await work();
  } finally {
    timers.clear(handle);
    const outcome = await announced;
    // eslint-disable-next-line no-unsafe-finally -- the announcement failed: the caller's pass fails as before
    if (outcome?.failed === true) throw outcome.error;
  }
}
