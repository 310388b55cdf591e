// Inspection, one of the parts of a planner pass: the outcome of planning a policy from the catalog as
// it is now. Three ways, cheapest first: verified from the executor's post-apply snapshot (ADR 0017),
// confirmed by catalog fingerprint when nothing changed (ADR 0015), or a full read by an inspector.
import type { NatsConnection } from '@nats-io/transport-node';
import { managedScopePayload, scopeDigest, type ResourceCache } from '@rolepolicy/contracts';
import { canonicalJson, sha256Digest, type CatalogSnapshot, type MembershipEdge } from '@rolepolicy/policy';
import type { ReviewFacts } from '@rolepolicy/review';
import { requestSnapshotUnlessUnchanged } from '@rolepolicy/contracts';
import { API_VERSION, type PlanningOutcome, type PostgresPolicy } from '@rolepolicy/plan-lifecycle';
import type { AppliedSnapshotMissReason, AppliedSnapshots } from './applied-snapshots.js';
import type { ConflictProof } from './conflict-proof.js';
import { planningInputsDigest, type ConvergedMemo } from './converged-memo.js';
import { EPHEMERAL_ACCESS_CONFLICT, policyHeldAccess } from '@rolepolicy/plan-lifecycle';
import { inspectFailure, planPass, type PlanningInput } from '../planning/planning.js';
import { fingerprintPays, type Prepared } from '../planning/prepare.js';
import { reviewQueryOf, type ReviewRecorder } from './review-recording.js';

const policyKey = (namespace: string, name: string): string => `${namespace}/${name}`;

/** What inspection reads and records besides the policy. */
export interface InspectionDeps {
  readonly cache: Pick<ResourceCache, 'get' | 'list' | 'withFields'>;
  readonly nats: NatsConnection;
  readonly inspectTimeoutMs: number;
  readonly inspectSealKey: string;
  /** Each pass after an Applied result: verified from the post-apply snapshot, or why not. */
  readonly onAppliedSnapshot?: (outcome: 'verified' | AppliedSnapshotMissReason) => void;
  readonly converged: ConvergedMemo;
  readonly appliedSnapshots: AppliedSnapshots;
  readonly proof: ConflictProof;
  readonly review: ReviewRecorder;
  /** Per policy key: the held-access edges of its last planned pass (written here). */
  readonly heldAccess: Map<string, readonly MembershipEdge[]>;
  /** The plan an Applied result just reported (taken once), for verification from its snapshot. */
  readonly takeVerifyPlan: (
    key: string,
  ) => { readonly name: string; readonly inputs: string | undefined } | undefined;
  readonly nextSequence: () => string;
  readonly now: () => number;
}

/**
 * Digest of what an execution depends on besides the catalog: policy uid and spec, target reference and
 * the resolved connection, scope, password sources. In memory only (it covers credentials); null when it
 * cannot be encoded.
 */
export function executionInputs(policy: PostgresPolicy, prepared: Prepared): string | null {
  try {
    return sha256Digest(
      canonicalJson({
        uid: policy.metadata.uid,
        spec: policy.spec,
        target: prepared.target,
        connection: prepared.connection,
        scope: prepared.scope,
        passwordSources: prepared.passwordSources,
      }),
    );
  } catch {
    return null;
  }
}

/** Every planning input but the snapshot, with `desired` as composed with held access. */
export function planningInputs(
  policy: PostgresPolicy,
  prepared: Prepared,
  desired: Prepared['desired'],
): Omit<PlanningInput, 'snapshot' | 'snapshotRequestedAt'> {
  return {
    namespace: policy.metadata.namespace,
    spec: policy.spec,
    desired,
    scope: prepared.scope,
    target: prepared.target,
    connection: prepared.connection,
    passwordSources: prepared.passwordSources,
    appliedPasswordSourceVersions: policy.status?.applied_password_source_versions ?? {},
    allowSchemaOwnerTransfers: policy.spec.allow_schema_owner_transfers === true,
  };
}

/** Plans one policy from a catalog read (see the file comment for the three ways). */
export class Inspection {
  constructor(private readonly deps: InspectionDeps) {}

  /**
   * The fingerprint path (docs/planner.md §1): when the last full pass found nothing to change and every
   * planning input (held access included) is the same, the inspector is asked to confirm the catalog
   * fingerprint only. Null: the pass is full.
   */
  private fingerprintShortcut(
    key: string,
    policy: PostgresPolicy,
    prepared: Prepared,
  ): { fingerprint: string; inputs: string; edges: readonly MembershipEdge[] } | null {
    const usable = this.deps.converged.usable(key, this.deps.now());
    if (usable === null) return null;
    const ref = { namespace: policy.metadata.namespace, uid: policy.metadata.uid };
    const heldAccess = policyHeldAccess(this.deps.cache, ref, prepared.desired, usable.logicalFingerprint);
    if (!heldAccess.ok) return null;
    const inputs = planningInputsDigest(ref.uid, planningInputs(policy, prepared, heldAccess.desired));
    if (inputs === null || !this.deps.converged.matches(key, inputs)) return null;
    return { fingerprint: usable.fingerprint, inputs, edges: heldAccess.edges };
  }

  /**
   * The pass right after an Applied result, from the executor's post-apply snapshot of the same plan,
   * target and scope (ADR 0017), when it finds nothing left to change: convergence verified without a new
   * session. Anything else (changes left, nothing received, a mismatch) is null: the pass inspects.
   */
  private verifiedByAppliedSnapshot(
    key: string,
    policy: PostgresPolicy,
    prepared: Prepared,
  ): PlanningOutcome | null {
    const verify = this.deps.takeVerifyPlan(key);
    if (verify === undefined) return null;
    // A Secret rotated, or the spec edited, since the execution was requested: the executor's read says
    // nothing about the connection and content this pass must check (a dead port must fail here).
    const applied = this.deps.appliedSnapshots.take(
      key,
      verify.inputs === undefined || verify.inputs !== executionInputs(policy, prepared)
        ? null
        : {
            uid: policy.metadata.uid,
            plan: verify.name,
            target: prepared.target,
            scopeDigest: scopeDigest(prepared.scope),
          },
    );
    if ('miss' in applied) {
      this.deps.onAppliedSnapshot?.(applied.miss);
      return null;
    }
    // The executor's session used this very connection (the inputs above cover it): it reached the database.
    this.deps.proof.noteReached(
      policy.metadata.uid,
      prepared.connection,
      applied.snapshot.identity?.physical ?? null,
    );
    const outcome = this.planFromRead(policy, prepared, applied, applied.readAt);
    if (outcome.kind === 'computed' && outcome.plan.changeCount === 0) {
      this.deps.onAppliedSnapshot?.('verified');
      return outcome;
    }
    this.deps.onAppliedSnapshot?.('changes_left');
    this.deps.converged.forget(key);
    return null;
  }

  /** The pass's planning outcome: verified from a post-apply snapshot, confirmed by fingerprint, or read in full. */
  async inspectAndPlan(policy: PostgresPolicy, prepared: Prepared): Promise<PlanningOutcome> {
    const key = policyKey(policy.metadata.namespace, policy.metadata.name);
    const verified = this.verifiedByAppliedSnapshot(key, policy, prepared);
    if (verified !== null) return verified;
    const snapshotRequestedAt = new Date(this.deps.now()).toISOString();
    const shortcut = this.fingerprintShortcut(key, policy, prepared);
    let result;
    try {
      result = await requestSnapshotUnlessUnchanged(
        this.deps.nats,
        {
          v: 1,
          requestId: `${policy.metadata.uid}.${policy.metadata.generation}.${this.deps.nextSequence()}`,
          source: {
            apiVersion: API_VERSION,
            kind: 'PostgresPolicy',
            namespace: policy.metadata.namespace,
            name: policy.metadata.name,
            uid: policy.metadata.uid,
          },
          generation: policy.metadata.generation,
          connection: prepared.connection as never,
          scope: managedScopePayload(prepared.scope),
          review: reviewQueryOf(prepared.desired),
          withFingerprint: fingerprintPays(policy),
          ...(shortcut === null ? {} : { unlessFingerprint: shortcut.fingerprint }),
        },
        { timeoutMs: this.deps.inspectTimeoutMs, sealTo: this.deps.inspectSealKey },
      );
    } catch (error) {
      const text = error instanceof Error ? error.message.split('\n')[0] : String(error);
      return {
        kind: 'failed',
        error: {
          class: 'transient',
          reason: 'DatabaseInspectionFailed',
          message: `no inspector answered: ${text}`,
        },
      };
    }
    if (!result.ok) {
      this.deps.converged.forget(key);
      return { kind: 'failed', error: inspectFailure(result.error, prepared.connection) };
    }
    this.deps.proof.noteReached(
      policy.metadata.uid,
      prepared.connection,
      'unchanged' in result ? undefined : (result.snapshot.identity?.physical ?? null),
    );
    if ('unchanged' in result) {
      const reused =
        shortcut === null
          ? null
          : this.deps.converged.confirm(key, shortcut.inputs, result.fingerprint, snapshotRequestedAt);
      if (reused !== null) {
        // The fingerprint covers the server's physical identity: the recorded one is current. A reconciler
        // of a new term knows no identity of its own yet (the memo outlives terms), and conflicts between
        // databases of one server are found by it (ADR 0027).
        if (reused.kind === 'computed') {
          this.deps.proof.noteReached(
            policy.metadata.uid,
            prepared.connection,
            reused.plan.identity.physical,
          );
        }
        this.deps.heldAccess.set(key, shortcut!.edges);
        return reused;
      }
      // Never expected (`unchanged` only answers the fingerprint we sent): forget it and read in full.
      this.deps.converged.forget(key);
      return this.inspectAndPlan(policy, prepared);
    }
    return this.planFromRead(policy, prepared, result, snapshotRequestedAt);
  }

  /**
   * The outcome of a pass from a catalog read (the inspector's reply, or a post-apply snapshot): the
   * held access composed from it, planning, and the convergence recorded for the fingerprint path.
   */
  private planFromRead(
    policy: PostgresPolicy,
    prepared: Prepared,
    result: { snapshot: CatalogSnapshot; fingerprint?: string | null; reviewFacts?: ReviewFacts },
    snapshotRequestedAt: string,
  ): PlanningOutcome {
    const key = policyKey(policy.metadata.namespace, policy.metadata.name);
    // Memberships that anchored ephemeral access holds join the desired state; a conflict blocks the pass.
    const heldAccess = policyHeldAccess(
      this.deps.cache,
      { namespace: policy.metadata.namespace, uid: policy.metadata.uid },
      prepared.desired,
      result.snapshot.identity.logical_fingerprint,
      result.snapshot.memberships,
    );
    if (!heldAccess.ok) {
      this.deps.heldAccess.delete(key);
      this.deps.converged.forget(key);
      return {
        kind: 'failed',
        error: { class: 'permanent', reason: EPHEMERAL_ACCESS_CONFLICT, message: heldAccess.message },
      };
    }
    this.deps.heldAccess.set(key, heldAccess.edges);
    const inputs = planningInputs(policy, prepared, heldAccess.desired);
    const planning = { ...inputs, snapshot: result.snapshot, snapshotRequestedAt };
    const { outcome, plan } = planPass(planning);
    // The review artifact of a plan this pass creates is built from the same engine result.
    if (outcome.kind === 'computed' && plan !== null) {
      const facts = result.reviewFacts ?? null;
      this.deps.review.noteInspection(key, {
        planning,
        facts,
        plan,
        contentDigest: outcome.plan.contentDigest,
      });
    } else {
      this.deps.review.endPass(key);
    }
    this.deps.converged.record(
      key,
      planningInputsDigest(policy.metadata.uid, inputs),
      result.fingerprint ?? undefined,
      result.snapshot.identity.logical_fingerprint,
      outcome,
      this.deps.now(),
    );
    return outcome;
  }
}
