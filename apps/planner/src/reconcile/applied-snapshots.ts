// Post-apply snapshots the executors sent (ADR 0017): what a policy's managed scope held right after its
// plan committed, read on the session that held the lock. The pass that follows the Applied result may
// verify convergence from one instead of asking an inspector; it is used at most once, only for the plan
// just applied, the same target and the same scope, and only while fresh. Anything else, or nothing
// received, and the pass inspects as before.
import type { AppliedSnapshotV1 } from '@rolepolicy/contracts';
import type { CatalogSnapshot } from '@rolepolicy/policy';

/** What a pass may plan from in place of an inspector reply. */
export interface AppliedSnapshot {
  readonly snapshot: CatalogSnapshot;
  readonly fingerprint: string | null;
  /** When the executor began reading (after the commit): the pass's `snapshotRequestedAt`. */
  readonly readAt: string;
}

/** What the pass expects of the snapshot it takes. */
export interface AppliedSnapshotExpectation {
  readonly uid: string | undefined;
  readonly plan: string;
  readonly target: string;
  readonly scopeDigest: string;
}

/**
 * Why a pass had no snapshot to verify from (the reason label of
 * `rp_planner_applied_snapshot_unused_total`): none arrived, the inputs moved since the execution was
 * requested, it came too late, it was read for another plan, target, scope or policy. `changes_left` is
 * the pass's own finding: the snapshot showed work still to do.
 */
export type AppliedSnapshotMissReason =
  | 'not_received'
  | 'inputs_changed'
  | 'expired'
  | 'other_policy'
  | 'other_plan'
  | 'other_target'
  | 'other_scope'
  | 'changes_left';

/** No snapshot for this pass, and why. */
export interface AppliedSnapshotMiss {
  readonly miss: AppliedSnapshotMissReason;
}

function missOf(
  entry: { message: AppliedSnapshotV1 },
  expected: AppliedSnapshotExpectation,
  expired: boolean,
): AppliedSnapshotMissReason | null {
  const { message } = entry;
  if (expired) return 'expired';
  if (expected.uid === undefined || message.policy.uid !== expected.uid) return 'other_policy';
  if (message.plan.name !== expected.plan) return 'other_plan';
  if (message.target !== expected.target) return 'other_target';
  if (message.scopeDigest !== expected.scopeDigest) return 'other_scope';
  return null;
}

export class AppliedSnapshots {
  private readonly entries = new Map<string, { message: AppliedSnapshotV1; at: number }>();

  constructor(
    /** How long after arrival a snapshot may stand for a verification (the result normally follows at once). */
    private readonly ttlMs: number,
    /** Bound on memory when no pass takes them (another replica leads, or results are delayed). */
    private readonly maxEntries: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Keeps the newest snapshot per policy. */
  put(message: AppliedSnapshotV1): void {
    const key = `${message.policy.namespace}/${message.policy.name}`;
    this.entries.delete(key);
    this.entries.set(key, { message, at: this.now() });
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
    }
  }

  /**
   * The snapshot for the policy `key` if it matches `expected` and is fresh, else why not; taken either
   * way (`null` expects nothing: the snapshot is only dropped).
   */
  take(key: string, expected: AppliedSnapshotExpectation | null): AppliedSnapshot | AppliedSnapshotMiss {
    const entry = this.entries.get(key);
    if (entry === undefined) return { miss: 'not_received' };
    this.entries.delete(key);
    if (expected === null) return { miss: 'inputs_changed' };
    const miss = missOf(entry, expected, this.now() - entry.at > this.ttlMs);
    if (miss !== null) return { miss };
    const { message } = entry;
    return {
      // The message contract checks only the snapshot's identity fields; the body is the executor's own
      // CatalogSnapshot, sent as it read it (the digest the verification compares covers all of it).
      snapshot: message.snapshot,
      fingerprint: message.fingerprint,
      readAt: message.readAt,
    };
  }

  size(): number {
    return this.entries.size;
  }
}
