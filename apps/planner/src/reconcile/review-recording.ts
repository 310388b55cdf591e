// Records the review artifact of every durable plan the planner creates (issue 14): built from the pass's
// own inspection (snapshot and review facts of one transaction), annotated on the plan, and written as a
// ConfigMap owned by the plan once the API server has given the plan its uid (see docs/review.md).
import type { AnyCached, InspectRequestV1 } from '@rolepolicy/contracts';
import { computePlan, contentDigest, type DesiredState } from '@rolepolicy/policy';
import {
  buildReviewArtifact,
  serializeReviewArtifact,
  toolVersion,
  type ReviewFacts,
} from '@rolepolicy/review';
import {
  buildReviewConfigMap,
  ownedByPlan,
  withReviewAnnotation,
  type ConfigMap,
  type PostgresPolicy,
  type PostgresPolicyPlan,
} from '@rolepolicy/plan-lifecycle';
import type { UnkeyedCommand } from '../planning/gateway-commands.js';
import type { PlanningInput } from '../planning/planning.js';

/** How long a built artifact waits for its plan to show up in the cache (then it is dropped). */
const PENDING_TTL_MS = 10 * 60_000;

/**
 * The inspect request's `review` field for a policy: its retirements are the only roles a plan can drop,
 * and the `pg_*` roles it names in memberships and grants are the predefined roles to look for.
 */
export function reviewQueryOf(desired: DesiredState): NonNullable<InspectRequestV1['review']> {
  const named = [
    ...desired.memberships.flatMap((m) => [m.role, m.member]),
    ...desired.grants.map((g) => g.grantee),
  ];
  return {
    dropRoles: [...new Set(desired.retirements.map((r) => r.role))],
    predefinedRoles: [...new Set(named.filter((r) => r.startsWith('pg_')))],
  };
}

interface Inspection {
  readonly planning: PlanningInput;
  readonly facts: ReviewFacts | null;
}

/** What the recorder needs from the reconciler. */
export interface ReviewRecorderDeps {
  readonly send: (command: UnkeyedCommand) => Promise<void>;
  readonly log: { warn(m: string): void };
}

/** Keeps each pass's inspection until its decision is carried out, and artifacts until their plan exists. */
export class ReviewRecorder {
  private readonly inspections = new Map<string, Inspection>();
  private readonly pending = new Map<string, { configMap: ConfigMap; at: number }>();

  constructor(private readonly deps: ReviewRecorderDeps) {}

  /** Remembers what the pass of `policyKey` planned from (replaces an earlier pass's). */
  noteInspection(policyKey: string, planning: PlanningInput, facts: ReviewFacts | null): void {
    this.inspections.set(policyKey, { planning, facts });
  }

  /** Forgets the pass's inspection (a pass without one must never record an older one's artifact). */
  endPass(policyKey: string): void {
    this.inspections.delete(policyKey);
  }

  /**
   * The plan to create: with the review annotation when its artifact could be built and stored (the
   * ConfigMap is written once the plan exists), else unchanged, with a warning naming the plan.
   */
  recordPlan(policyKey: string, policy: PostgresPolicy, plan: PostgresPolicyPlan): PostgresPolicyPlan {
    const inspection = this.inspections.get(policyKey);
    const where = `${plan.metadata.namespace}/${plan.metadata.name}`;
    const computedAt = plan.status?.computedAt;
    if (inspection === undefined || typeof computedAt !== 'string') return plan;
    try {
      const { planning } = inspection;
      const result = computePlan({
        desired: planning.desired,
        snapshot: planning.snapshot,
        mode: planning.desired.reconciliation_mode,
        passwordSources: planning.passwordSources,
        appliedPasswordSourceVersions: planning.appliedPasswordSourceVersions,
        allowSchemaOwnerTransfers: planning.allowSchemaOwnerTransfers,
      });
      const { namespace, name } = policy.metadata;
      const artifact = buildReviewArtifact({
        toolVersion: toolVersion(),
        capturedAt: computedAt,
        contentDigest: contentDigest(policy.spec).digest,
        targetLabel: `${namespace}/${name}`,
        document: `PostgresPolicy/${namespace}/${name}`,
        mode: planning.desired.reconciliation_mode,
        desired: planning.desired,
        scope: planning.scope,
        snapshot: planning.snapshot,
        plan: result,
        facts: inspection.facts,
      });
      const configMap = buildReviewConfigMap(plan, serializeReviewArtifact(artifact));
      if (configMap === null) {
        this.deps.log.warn(`plan ${where}: review artifact too large to store; not recorded`);
        return plan;
      }
      this.sweep();
      this.pending.set(where, { configMap, at: Date.now() });
      return withReviewAnnotation(plan, configMap.metadata.name);
    } catch (error) {
      const text = error instanceof Error ? error.message.split('\n')[0] : String(error);
      this.deps.log.warn(`plan ${where}: review artifact not recorded: ${text}`);
      return plan;
    }
  }

  /** A plan seen in the cache: writes its pending review ConfigMap, owned by it, through the gateway. */
  onPlan(object: AnyCached): void {
    const where = `${object.metadata.namespace ?? ''}/${object.metadata.name}`;
    const entry = this.pending.get(where);
    const uid = (object.metadata as { uid?: string }).uid;
    if (entry === undefined || uid === undefined) return;
    this.pending.delete(where);
    const configMap = ownedByPlan(entry.configMap, { name: object.metadata.name, uid });
    const { namespace, name } = configMap.metadata;
    this.deps
      .send({
        v: 1,
        command: 'apply-resource',
        target: { apiVersion: 'v1', kind: 'ConfigMap', namespace, name },
        object: { ...configMap },
      })
      .catch((error: unknown) =>
        this.deps.log.warn(
          `plan ${where}: review ConfigMap not sent: ${error instanceof Error ? error.message : String(error)}`,
        ),
      );
  }

  private sweep(): void {
    for (const [key, entry] of this.pending) {
      if (Date.now() - entry.at > PENDING_TTL_MS) this.pending.delete(key);
    }
  }
}
