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
   * The snapshot for the policy `key` if it matches `expected` and is fresh; taken either way (`null`
   * expects nothing: the snapshot is only dropped).
   */
  take(key: string, expected: AppliedSnapshotExpectation | null): AppliedSnapshot | null {
    const entry = this.entries.get(key);
    if (entry === undefined) return null;
    this.entries.delete(key);
    if (expected === null) return null;
    const { message } = entry;
    const matches =
      this.now() - entry.at <= this.ttlMs &&
      expected.uid !== undefined &&
      message.policy.uid === expected.uid &&
      message.plan.name === expected.plan &&
      message.target === expected.target &&
      message.scopeDigest === expected.scopeDigest;
    if (!matches) return null;
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
