// The candidate pass of a policy reconcile (I/O side): after the policy's own pass, in its per-policy queue
// slot, read the policy's candidates, compute the plans of the plannable ones from one shared inspection
// (preview targets inspect their own database), decide (pure) and send the steps through the candidate
// command sink. It has no way to request execution or create a Secret.
import { createHash } from 'node:crypto';
import type { NatsConnection } from '@nats-io/transport-node';
import type { AnyCached, ResourceCache } from '@rolepolicy/contracts';
import { OwnWrites, managedScopePayload } from '@rolepolicy/contracts';
import type { SecretLike, SecretLookup } from '@rolepolicy/kube';
import { unionScopes, type CatalogSnapshot, type MembershipEdge } from '@rolepolicy/policy';
import { requestSnapshot } from '@rolepolicy/contracts';
import {
  API_VERSION,
  type PostgresPolicy,
  type PostgresPolicyPlan,
  type ReconcileDecision,
} from '@rolepolicy/plan-lifecycle';
import { inspectFailure, planFromSnapshot } from '../planning/planning.js';
import { preparePolicy, type Prepared } from '../planning/prepare.js';
import type { SecretReader } from '@rolepolicy/contracts';
import { secretReadError, secretsNamedBy, withLiteralPassword } from '@rolepolicy/plan-lifecycle';
import type { UnkeyedCommand } from '../planning/gateway-commands.js';
import { candidateCommandsOf } from './candidate-commands.js';
import { candidateEventsOf } from './candidate-events.js';
import type { PlanEvent } from '../planning/plan-events.js';
import {
  decideCandidates,
  plannable,
  type CandidateOutcome,
  type CandidatePassInput,
  type PolicyGate,
} from './lifecycle.js';
import { withHeldAccess } from './held-access.js';
import { recognisePromotion, type PromotionRecognition } from './promotion.js';
import {
  CANDIDATE_KIND,
  fromKubeCandidate,
  type Candidate,
  type CandidateSettings,
  type CandidateStatus,
} from './resources.js';
import type { CandidateStep } from './steps.js';
import { candidateView, previewTarget } from './view.js';

/** How long a candidate status this planner wrote stands in for a cache that has not shown it yet. */
const OWN_WRITE_TTL_MS = 30_000;

/** What the candidate pass needs from the planner. */
export interface CandidatePlannerDeps {
  readonly cache: Pick<ResourceCache, 'list'>;
  readonly nats: NatsConnection;
  readonly secrets: SecretReader;
  /** Sends one gateway command (the reconciler's `send`); only candidate-vocabulary commands reach it. */
  readonly send: (command: UnkeyedCommand) => Promise<void>;
  /** Records one Event in the policy's ordering, best effort (the reconciler's recorder: never throws). */
  readonly recordEvent: (event: PlanEvent, policy: PostgresPolicy) => Promise<void>;
  /** Read-your-writes: a plan this pass created, so the next pass sees it before the cache does. */
  readonly planCreated: (plan: PostgresPolicyPlan) => void;
  readonly settings: CandidateSettings;
  readonly inspectTimeoutMs: number;
  /** The inspectors' public key each request's connection is sealed to (INSPECT_SEAL_PUBLIC_KEY). */
  readonly inspectSealKey: string;
  readonly log: { log(m: string): void; warn(m: string): void };
  /** Counts inspections (metrics and the bench). */
  readonly onInspection?: (kind: 'shared' | 'individual' | 'preview') => void;
  /** Called with the store's name when an own write is dropped unseen (`rp_own_writes_expired_total`). */
  readonly onOwnWriteExpired?: (store: string) => void;
  /** The clock (epoch ms) of every decision here; default `Date.now`. */
  readonly now?: () => number;
}

/** The policy's candidate pass input besides what the reconciler already has. */
export interface CandidatePassContext {
  readonly policy: PostgresPolicy;
  readonly decision: ReconcileDecision;
  readonly plans: readonly PostgresPolicyPlan[];
  /**
   * Seam for ephemeral access (issue 13): membership edges of active ephemeral requests on this policy.
   * Candidates are planned with the edges whose roles they declare, so a proposal never revokes live access.
   */
  readonly heldAccess: readonly MembershipEdge[];
}

/**
 * Candidates may be planned only while the policy converged with no plan of its own waiting. A converged
 * pass that verified an apply keeps that plan (Applied, waiting for nothing) as `current_plan_ref`.
 */
export function policyGate(decision: ReconcileDecision): PolicyGate {
  const planRef = decision.status.current_plan_ref;
  if (decision.kind === 'reconciled' || (decision.kind === 'observed' && planRef == null)) {
    return { kind: 'open' };
  }
  if (planRef != null) {
    return {
      kind: 'blocked',
      message: `policy plan ${planRef.name} awaits a decision or execution; candidates are planned once the policy converged`,
    };
  }
  return {
    kind: 'blocked',
    message: `the policy is not converged (${decision.kind}); candidates are planned once it is`,
  };
}

let sequence = 0;

/** The uid of the candidate controlling a plan (its controller ownerReference), if any. */
export function candidateControllerUid(object: AnyCached): string | undefined {
  const refs = (
    object.metadata as { ownerReferences?: { uid: string; kind: string; controller?: boolean }[] }
  ).ownerReferences;
  return refs?.find((o) => o.controller === true && o.kind === CANDIDATE_KIND)?.uid;
}

/** Plans, supersedes and promotes the candidates of one policy at a time. */
export class CandidatePlanner {
  /**
   * Candidate uid -> the outcome of its last planning and the exact inputs it was computed from. Planning is
   * a pure function of those inputs, so an unchanged candidate against an identical snapshot (same bytes),
   * base policy and password sources reuses its outcome instead of diffing the catalog again.
   */
  private readonly memo = new Map<string, { readonly key: string; readonly outcome: CandidateOutcome }>();
  /**
   * Read-your-writes for candidate status: uid -> the status this planner last wrote and the resourceVersion
   * it was computed from. Status writes replace the whole status, so a pass that read the cache before it
   * showed the previous write (promotion recognition, then the candidate pass of the same reconcile) would
   * otherwise put the old conditions back. Dropped once the cache shows a newer version of the candidate, or
   * after {@link OWN_WRITE_TTL_MS} (a write the gateway never applied must not hide the stored status).
   */
  private readonly written: OwnWrites<CandidateStatus, Candidate>;

  /** The injected clock (epoch ms). */
  private readonly now: () => number;

  constructor(private readonly deps: CandidatePlannerDeps) {
    this.now = deps.now ?? Date.now;
    this.written = new OwnWrites({
      store: 'candidate-status',
      expiryMs: OWN_WRITE_TTL_MS,
      onExpired: deps.onOwnWriteExpired,
      now: this.now,
    });
  }

  /** Candidates in the policy's namespace that name it in `spec.policyRef`. */
  candidatesOf(policy: PostgresPolicy): Candidate[] {
    return this.deps.cache
      .list('postgrespolicycandidate', policy.metadata.namespace)
      .map((o) => fromKubeCandidate(o))
      .filter((c): c is Candidate => c !== null && c.spec.policyRef?.name === policy.metadata.name)
      .map((c) => this.withOwnWrite(c));
  }

  /** The candidate as this planner last wrote it while the cache still shows the version it was read at. */
  private withOwnWrite(candidate: Candidate): Candidate {
    const own = this.written.pending(candidate.metadata.uid, candidate);
    return own === undefined ? candidate : { ...candidate, status: own.value };
  }

  /** Sends one step's commands and Events, remembering a status write for {@link withOwnWrite}. */
  private async sendStep(step: CandidateStep, policy: PostgresPolicy): Promise<void> {
    for (const command of candidateCommandsOf(step, policy)) await this.deps.send(command);
    for (const event of candidateEventsOf(step)) await this.deps.recordEvent(event, policy);
    if (step.kind === 'writeCandidateStatus') {
      // A step computed from our own write carries the cached version that write was based on.
      const { metadata } = step.candidate;
      this.written.record(metadata.uid, step.status, metadata.resourceVersion);
    }
    if (step.kind === 'deleteCandidate') this.written.forget(step.candidate.metadata.uid);
  }

  /** Promotion recognition for the policy's decision (its reports are sent right away). */
  async recognise(
    policy: PostgresPolicy,
    plans: readonly PostgresPolicyPlan[],
  ): Promise<PromotionRecognition> {
    const candidates = this.candidatesOf(policy);
    if (candidates.length === 0) return { handOver: null, previous: null, reports: [] };
    const recognition = recognisePromotion(policy, candidates, plans, new Date(this.now()).toISOString());
    for (const step of recognition.reports) await this.sendStep(step, policy);
    return recognition;
  }

  /** The candidate pass after the policy's own pass. */
  async afterPolicyPass(context: CandidatePassContext): Promise<void> {
    const { policy } = context;
    const candidates = this.candidatesOf(policy);
    if (candidates.length === 0) return;
    const input: CandidatePassInput = {
      policy,
      gate: policyGate(context.decision),
      candidates,
      plans: context.plans,
      now: new Date(this.now()).toISOString(),
      settings: this.deps.settings,
    };
    const outcomes = await this.outcomes(policy, plannable(input), context.heldAccess);
    const steps = decideCandidates(input, outcomes);
    for (const step of steps) {
      await this.sendStep(step, policy);
      if (step.kind === 'createPlan') this.deps.planCreated(step.plan);
    }
    if (steps.length > 0) {
      this.deps.log.log(
        `policy ${policy.metadata.namespace}/${policy.metadata.name}: ${candidates.length} candidates, ${outcomes.size} planned, ${steps.length} steps`,
      );
    }
  }

  private async outcomes(
    policy: PostgresPolicy,
    candidates: readonly Candidate[],
    heldAccess: readonly MembershipEdge[],
  ): Promise<Map<string, CandidateOutcome>> {
    const out = new Map<string, CandidateOutcome>();
    const shared: { candidate: Candidate; prepared: Prepared }[] = [];
    const previews: { candidate: Candidate; prepared: Prepared }[] = [];
    const secrets = await this.readSecrets(policy, candidates);
    for (const candidate of candidates) {
      const prepared = this.prepare(policy, candidate, heldAccess, secrets);
      if (!prepared.ok) out.set(candidate.metadata.name, prepared.outcome);
      else if (previewTarget(candidate) === null) shared.push({ candidate, prepared: prepared.prepared });
      else previews.push({ candidate, prepared: prepared.prepared });
    }
    if (shared.length > 0) {
      const scope = unionScopes(shared.map((s) => s.prepared.scope));
      const read = await this.inspect(policy, shared[0]!.prepared, scope, 'shared');
      const snapshotKey = read.ok
        ? createHash('sha256').update(JSON.stringify(read.snapshot)).digest('hex')
        : '';
      for (const { candidate, prepared } of shared) {
        if (!read.ok) {
          out.set(candidate.metadata.name, read.outcome);
          continue;
        }
        const key = JSON.stringify([
          snapshotKey,
          candidate.spec.content,
          policy.metadata.uid,
          policy.metadata.name,
          prepared.target,
          prepared.passwordSources,
          policy.status?.applied_password_source_versions ?? {},
          policy.spec.allow_schema_owner_transfers === true,
          prepared.desired.memberships.length,
          heldAccess,
        ]);
        const known = this.memo.get(candidate.metadata.uid);
        const outcome =
          known?.key === key ? known.outcome : this.plan(policy, candidate, prepared, read.snapshot, read.at);
        this.memo.set(candidate.metadata.uid, { key, outcome });
        out.set(candidate.metadata.name, outcome);
      }
      const live = new Set(candidates.map((c) => c.metadata.uid));
      for (const uid of this.memo.keys()) if (!live.has(uid)) this.memo.delete(uid);
    }
    for (const { candidate, prepared } of previews) {
      const read = await this.inspect(policy, prepared, prepared.scope, 'preview');
      out.set(
        candidate.metadata.name,
        read.ok ? this.plan(policy, candidate, prepared, read.snapshot, read.at) : read.outcome,
      );
    }
    return out;
  }

  /**
   * One read, at the moment of use, of every Secret the candidates' views name (the policy's connection, the
   * preview targets, password Secrets), instead of a gateway round trip per candidate.
   */
  private async readSecrets(
    policy: PostgresPolicy,
    candidates: readonly Candidate[],
  ): Promise<
    { ok: true; lookup: SecretLookup; literal: string | undefined } | { ok: false; error: unknown }
  > {
    const names = new Set<string>();
    let literal = false;
    for (const candidate of candidates) {
      const named = secretsNamedBy(candidateView(policy, candidate));
      for (const name of named.names) names.add(name);
      literal ||= named.literalPassword;
    }
    try {
      const read = await this.deps.secrets.read(policy.metadata.namespace, [...names].sort(), {
        ...(literal ? { literalPasswordOf: policy.metadata.name } : {}),
      });
      return {
        ok: true,
        lookup: (name) => read.secrets.get(name) as SecretLike | undefined,
        literal: read.literalPassword,
      };
    } catch (error) {
      return { ok: false, error };
    }
  }

  private prepare(
    policy: PostgresPolicy,
    candidate: Candidate,
    heldAccess: readonly MembershipEdge[],
    secrets: Awaited<ReturnType<CandidatePlanner['readSecrets']>>,
  ): { ok: true; prepared: Prepared } | { ok: false; outcome: CandidateOutcome } {
    const view = candidateView(policy, candidate);
    try {
      if (!secrets.ok) throw secrets.error;
      const resolved = secretsNamedBy(view).literalPassword
        ? withLiteralPassword(view, secrets.literal)
        : view;
      const prepared = preparePolicy(resolved, secrets.lookup);
      if (!prepared.ok) {
        return {
          ok: false,
          outcome: { kind: 'failed', reason: prepared.error.reason, message: prepared.error.message },
        };
      }
      return { ok: true, prepared: { ...prepared, desired: withHeldAccess(prepared.desired, heldAccess) } };
    } catch (error) {
      const failure = secretReadError(error);
      return { ok: false, outcome: { kind: 'failed', reason: failure.reason, message: failure.message } };
    }
  }

  private async inspect(
    policy: PostgresPolicy,
    prepared: Prepared,
    scope: Prepared['scope'],
    kind: 'shared' | 'preview',
  ): Promise<{ ok: true; snapshot: CatalogSnapshot; at: string } | { ok: false; outcome: CandidateOutcome }> {
    const at = new Date(this.now()).toISOString();
    this.deps.onInspection?.(kind);
    sequence += 1;
    try {
      const result = await requestSnapshot(
        this.deps.nats,
        {
          v: 1,
          requestId: `${policy.metadata.uid}.candidates.${this.now()}.${sequence}`,
          source: {
            apiVersion: API_VERSION,
            kind: 'PostgresPolicy',
            namespace: policy.metadata.namespace,
            name: policy.metadata.name,
            uid: policy.metadata.uid,
          },
          generation: policy.metadata.generation,
          connection: prepared.connection as never,
          scope: managedScopePayload(scope),
        },
        { timeoutMs: this.deps.inspectTimeoutMs, sealTo: this.deps.inspectSealKey },
      );
      if (!result.ok) {
        const error = inspectFailure(result.error, prepared.connection);
        return { ok: false, outcome: { kind: 'failed', reason: error.reason, message: error.message } };
      }
      return { ok: true, snapshot: result.snapshot, at };
    } catch (error) {
      const text = error instanceof Error ? error.message.split('\n')[0] : String(error);
      return {
        ok: false,
        outcome: {
          kind: 'failed',
          reason: 'DatabaseInspectionFailed',
          message: `no inspector answered: ${text}`,
        },
      };
    }
  }

  private plan(
    policy: PostgresPolicy,
    candidate: Candidate,
    prepared: Prepared,
    snapshot: CatalogSnapshot,
    at: string,
  ): CandidateOutcome {
    const outcome = planFromSnapshot({
      namespace: policy.metadata.namespace,
      spec: candidate.spec.content,
      desired: prepared.desired,
      scope: prepared.scope,
      target: prepared.target,
      connection: prepared.connection,
      passwordSources: prepared.passwordSources,
      appliedPasswordSourceVersions: policy.status?.applied_password_source_versions ?? {},
      allowSchemaOwnerTransfers: policy.spec.allow_schema_owner_transfers === true,
      snapshot,
      snapshotRequestedAt: at,
    });
    if (outcome.kind === 'failed') {
      return { kind: 'failed', reason: outcome.error.reason, message: outcome.error.message };
    }
    return { kind: 'computed', plan: outcome.plan, preview: previewTarget(candidate) };
  }
}
