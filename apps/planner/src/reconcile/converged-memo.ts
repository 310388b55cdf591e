// What the planner remembers of a policy's last full pass that found nothing to change: the digest of every
// planning input but the snapshot, the catalog fingerprint that snapshot was read from, and the outcome.
// While both still hold, a pass asks the inspector for the fingerprint only and reuses the outcome.
//
// One memo per replica, kept across its leader terms (docs/planner.md, "Across leader terms"): an entry is
// the outcome of a pure function of (planning inputs, catalog), and a pass re-reads both (the inputs from
// the cache, the catalog by fingerprint, which covers the server's physical identity), so whatever another
// leader did meanwhile (plans created, applied or superseded, statuses written, a spec edited and put back)
// either moved one of them or leaves the outcome as it was. Policy and plan state is never read from it:
// each pass decides on the cache. Dropped at a term's start: entries of policies the cache no longer holds.
import { canonicalJson, sha256Digest } from '@rolepolicy/policy';
import type { ComputedPlan, PlanningOutcome } from '@rolepolicy/plan-lifecycle';
import type { PlanningInput } from '../planning/planning.js';

/** When the fingerprint path gives way to a full pass anyway (belt and braces; docs/planner.md). */
export interface ConvergedMemoSettings {
  /** A full pass after this many fingerprint-only passes in a row (1: every pass is full). */
  readonly fullEveryPasses: number;
  /** A full pass when the last full one is older than this. */
  readonly fullAfterMs: number;
}

interface Entry {
  readonly inputs: string;
  readonly fingerprint: string;
  readonly plan: ComputedPlan;
  /** The snapshot's logical fingerprint, for composing the ephemeral overlay before the request. */
  readonly logicalFingerprint: string | null;
  readonly fullAt: number;
  passes: number;
}

/**
 * The digest of everything `planFromSnapshot` reads besides the snapshot (and the request time): the
 * policy uid and spec, the desired state with the ephemeral overlay, scope, target, connection, password
 * sources and applied versions. In memory only (it covers credentials); null when it cannot be encoded.
 */
export function planningInputsDigest(
  uid: string,
  input: Omit<PlanningInput, 'snapshot' | 'snapshotRequestedAt'>,
): string | null {
  try {
    return sha256Digest(canonicalJson({ uid, ...input }));
  } catch {
    return null;
  }
}

/** Per policy key: the last convergence a full pass recorded. */
export class ConvergedMemo {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly settings: ConvergedMemoSettings) {}

  /**
   * The recorded convergence a pass may confirm by fingerprint, or null when the pass must be full (none
   * recorded, planning inputs changed, or the belt-and-braces bounds are reached).
   */
  usable(
    key: string,
    now: number,
  ): { readonly fingerprint: string; readonly logicalFingerprint: string | null } | null {
    const entry = this.entries.get(key);
    if (entry === undefined) return null;
    if (
      entry.passes + 1 >= this.settings.fullEveryPasses ||
      now - entry.fullAt >= this.settings.fullAfterMs
    ) {
      return null;
    }
    return { fingerprint: entry.fingerprint, logicalFingerprint: entry.logicalFingerprint };
  }

  /**
   * The recorded outcome when `inputs` equal the recorded ones and the inspector confirmed `fingerprint`;
   * null otherwise (the caller then runs the full path).
   */
  confirm(
    key: string,
    inputs: string | null,
    fingerprint: string,
    snapshotRequestedAt: string,
  ): PlanningOutcome | null {
    const entry = this.entries.get(key);
    if (
      entry === undefined ||
      inputs === null ||
      entry.inputs !== inputs ||
      entry.fingerprint !== fingerprint
    ) {
      return null;
    }
    entry.passes += 1;
    return { kind: 'computed', plan: { ...entry.plan, snapshotRequestedAt } };
  }

  /** Whether `inputs` are the recorded ones (so the fingerprint alone can decide). */
  matches(key: string, inputs: string | null): boolean {
    return inputs !== null && this.entries.get(key)?.inputs === inputs;
  }

  /** Records a full pass: kept only when it found nothing to change and carries a fingerprint. */
  record(
    key: string,
    inputs: string | null,
    fingerprint: string | undefined,
    logicalFingerprint: string | null,
    outcome: PlanningOutcome,
    now: number,
  ): void {
    if (
      inputs === null ||
      fingerprint === undefined ||
      outcome.kind !== 'computed' ||
      outcome.plan.changeCount !== 0
    ) {
      this.entries.delete(key);
      return;
    }
    this.entries.set(key, {
      inputs,
      fingerprint,
      plan: outcome.plan,
      logicalFingerprint,
      fullAt: now,
      passes: 0,
    });
  }

  forget(key: string): void {
    this.entries.delete(key);
  }

  /** Keeps only the entries whose key `live` accepts (a new term: policies deleted meanwhile go). */
  retain(live: (key: string) => boolean): void {
    for (const key of this.entries.keys()) if (!live(key)) this.entries.delete(key);
  }

  /** How many policies have a recorded convergence (tests, logs). */
  get size(): number {
    return this.entries.size;
  }
}
