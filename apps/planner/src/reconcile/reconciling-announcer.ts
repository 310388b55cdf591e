// When a policy shows `Reconciling` (NewGeneration) before its outcome: only when the work on a new generation
// takes long enough for a reader to look (issue 28), whether the pass waits for its turn (behind
// PLANNER_CONCURRENCY passes in a burst, or its own running pass) or its inspection outlasts the delay.
import { announceIfSlow, type AnnounceTimers } from '@rolepolicy/runtime';
import { reconcileGate, reconcilingStatus, type PostgresPolicy } from '@rolepolicy/plan-lifecycle';
import { RECONCILING_AFTER_MS } from './pass-timing.js';
import type { PolicyView } from './policy-view.js';

/** What the announcer needs from the reconciler. */
export interface ReconcilingAnnouncerDeps {
  /** How long the work may take before the policy shows `Reconciling` (default RECONCILING_AFTER_MS). */
  readonly afterMs?: number;
  /** Runs `task` after the policy's running work, without waiting for a pass slot (KeyedQueue.run). */
  readonly run: (key: string, task: () => Promise<void>) => Promise<void>;
  /** The policy as its next pass reads it (our own writes on top), and the policy status writes. */
  readonly view: Pick<PolicyView, 'currentPolicy' | 'writeStatus'>;
  /** Whether the reconciler still follows the policy (and leads). */
  readonly followed: (key: string) => boolean;
  readonly now: () => number;
  /** Timers (tests decide when the delay has passed). */
  readonly timers?: AnnounceTimers;
}

const REAL_TIMERS: AnnounceTimers = {
  set: (fire, ms) => setTimeout(fire, ms),
  clear: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/**
 * Writes a policy's `Reconciling` (NewGeneration) once per generation, when the pass on it is slow: it waited
 * over `afterMs` to start ({@link requested}), or its inspection did ({@link inspecting}). A burst's new
 * policies otherwise showed no status at all until their pass started, tens of seconds later. The waiting
 * pass's announcement runs in the policy's line (after its running work), and the pass reads it as our own
 * write: it announces nothing more, and its execution's status is held (one interim status per pass,
 * policy-view.ts). Nothing is written for a generation already attempted, nor for a policy the pass would
 * not inspect (invalid interval, suspended).
 */
export class ReconcilingAnnouncer {
  private readonly waiting = new Map<string, unknown>();

  constructor(private readonly deps: ReconcilingAnnouncerDeps) {}

  /**
   * A pass of the policy was requested: announce unless it starts within the delay. A policy whose current
   * generation was attempted already has nothing to announce (a spec edit requests a pass again).
   */
  requested(key: string): void {
    if (this.waiting.has(key) || !announces(this.policyOf(key))) return;
    const handle = this.timers().set(() => {
      this.waiting.delete(key);
      // Best effort, as announceIfSlow's: the pass writes its outcome in any case.
      this.deps.run(key, () => this.announce(key)).catch(() => undefined);
    }, this.afterMs());
    this.waiting.set(key, handle);
  }

  /** The policy's pass started, or the policy is no longer followed: nothing to announce for the wait. */
  started(key: string): void {
    const handle = this.waiting.get(key);
    if (handle === undefined) return;
    this.timers().clear(handle);
    this.waiting.delete(key);
  }

  /** Forgets every waiting announcement (the replica stops leading). */
  clear(): void {
    for (const key of [...this.waiting.keys()]) this.started(key);
  }

  /** Runs the pass's inspection of `policy`, announcing `Reconciling` beside it once it outlasts the delay. */
  inspecting<T>(policy: PostgresPolicy, inspect: () => Promise<T>): Promise<T> {
    const status = reconcilingStatus(policy, new Date(this.deps.now()).toISOString());
    if (status === null) return inspect();
    return announceIfSlow(
      inspect,
      () => this.deps.view.writeStatus(policy, status),
      this.afterMs(),
      this.timers(),
    );
  }

  private async announce(key: string): Promise<void> {
    const policy = this.policyOf(key);
    if (!announces(policy)) return;
    const status = reconcilingStatus(policy, new Date(this.deps.now()).toISOString());
    if (status !== null) await this.deps.view.writeStatus(policy, status);
  }

  private policyOf(key: string): PostgresPolicy | null {
    if (!this.deps.followed(key)) return null;
    const [namespace = '', name = ''] = key.split('/');
    return this.deps.view.currentPolicy(namespace, name);
  }

  private afterMs(): number {
    return this.deps.afterMs ?? RECONCILING_AFTER_MS;
  }

  private timers(): AnnounceTimers {
    return this.deps.timers ?? REAL_TIMERS;
  }
}

/** Whether a pass of the policy would announce `Reconciling`: a new generation, to be inspected. */
function announces(policy: PostgresPolicy | null): policy is PostgresPolicy {
  return (
    policy !== null &&
    policy.metadata.deletionTimestamp === undefined &&
    policy.status?.last_attempted_generation !== policy.metadata.generation &&
    reconcileGate(policy, { kind: 'clear' }).kind === 'inspect'
  );
}
