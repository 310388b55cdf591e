// Records the review artifact of every durable plan the planner creates (issue 14): built from the pass's
// own inspection (snapshot and review facts of one transaction), annotated on the plan, and written as a
// ConfigMap owned by the plan once the API server has given the plan its uid (see docs/review.md).
import type { AnyCached, InspectRequestV1 } from '@rolepolicy/contracts';
import { contentDigest, type DesiredState, type PlanResult } from '@rolepolicy/policy';
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

/** What a pass planned from, and the engine's plan it computed (the artifact is built from that result). */
export interface PassInspection {
  readonly planning: PlanningInput;
  readonly facts: ReviewFacts | null;
  readonly plan: PlanResult;
  /** `contentDigest(planning.spec).digest`, as the pass computed it for its plan summary. */
  readonly contentDigest: string;
}

/** What the recorder needs from the reconciler. */
export interface ReviewRecorderDeps {
  readonly send: (command: UnkeyedCommand) => Promise<void>;
  readonly log: { warn(m: string): void };
}

/** Keeps each pass's inspection until its decision is carried out, and artifacts until their plan exists. */
export class ReviewRecorder {
  private readonly inspections = new Map<string, PassInspection>();
  private readonly pending = new Map<string, { configMap: ConfigMap; at: number }>();
  /** The running code's version: read once (it reads package.json), it cannot change under this process. */
  private readonly toolVersion = toolVersion();

  constructor(private readonly deps: ReviewRecorderDeps) {}

  /** Remembers what the pass of `policyKey` planned from and what it planned (replaces an earlier pass's). */
  noteInspection(policyKey: string, inspection: PassInspection): void {
    this.inspections.set(policyKey, inspection);
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
      const { namespace, name } = policy.metadata;
      const artifact = buildReviewArtifact({
        toolVersion: this.toolVersion,
        capturedAt: computedAt,
        // The pass digested this very spec object already; another object (never expected) is digested anew.
        contentDigest:
          planning.spec === policy.spec ? inspection.contentDigest : contentDigest(policy.spec).digest,
        targetLabel: `${namespace}/${name}`,
        document: `PostgresPolicy/${namespace}/${name}`,
        mode: planning.desired.reconciliation_mode,
        desired: planning.desired,
        scope: planning.scope,
        snapshot: planning.snapshot,
        plan: inspection.plan,
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
