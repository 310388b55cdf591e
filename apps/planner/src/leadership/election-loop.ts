// Drives an Elector on timers: a round every retry period, and a watchdog at the leader's renew deadline
// so a renewal stuck in the network still ends the term on time. Rounds never overlap.
import type { Elector } from './elector.js';

/** Runs {@link Elector.tick} until stopped. */
export class ElectionLoop {
  private timer: NodeJS.Timeout | undefined;
  private watchdog: NodeJS.Timeout | undefined;
  private round: Promise<void> = Promise.resolve();
  private stopped = true;

  constructor(
    private readonly elector: Elector,
    private readonly retryMs: number,
    private readonly now: () => number,
  ) {}

  /** Starts; the first round runs at once. */
  start(): void {
    this.stopped = false;
    this.schedule(0);
  }

  /** Stops the timers and waits for the round in flight; a leader then releases the lease. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    clearTimeout(this.watchdog);
    await this.round;
    await this.elector.release();
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.round = this.elector.tick().finally(() => {
        this.arm();
        this.schedule(this.retryMs);
      });
    }, delayMs);
  }

  private arm(): void {
    clearTimeout(this.watchdog);
    const deadline = this.elector.deadlineMs();
    if (deadline === undefined || this.stopped) return;
    this.watchdog = setTimeout(() => this.elector.expire(), Math.max(0, deadline - this.now()));
  }
}
