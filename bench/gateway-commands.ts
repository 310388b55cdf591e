// The commands of `npm run bench -- gateway`, shaped as the fleet's: per policy the planner's plan (with its
// status) and review ConfigMap, the executor's Applying write, the planner's policy status and an Event.
// Built with the planner's own library functions (the plan by computePlanSummary, as the planner builds it)
// from the fleet policy (bench/fleet-policy.ts), so sizes and fields are those a fleet run sends.
import type { K8sCommandV1 } from '@rolepolicy/contracts';
import { policyOrderingKey } from '@rolepolicy/contracts';
import {
  API_VERSION,
  applyingPatch,
  buildPlan,
  buildReviewConfigMap,
  computePlanSummary,
  ownedByPlan,
  toKubePlan,
  type ComputedPlan,
  type PostgresPolicy,
} from '@rolepolicy/plan-lifecycle';
import { deriveManagedScope, expandPolicy, type PolicyContent } from '@rolepolicy/policy';
import { buildReviewArtifact, serializeReviewArtifact } from '@rolepolicy/review';
import { freshFleetSnapshot, smallPolicy } from './fleet-policy.js';

type Json = Record<string, unknown>;

/** The command kinds measured, in the order a policy's convergence sends them. */
export const COMMAND_KINDS = [
  'apply-plan',
  'apply-configmap',
  'patch-plan-status',
  'patch-policy-status',
  'record-event',
] as const;
export type CommandKind = (typeof COMMAND_KINDS)[number];

/** One policy as the API holds it (name and uid are what the commands need). */
export type BenchPolicy = { readonly namespace: string; readonly name: string; readonly uid: string };

const NOW = '2026-11-28T05:00:00Z';

/** The fleet policy's spec (one per database) for policy `i`. */
export function policySpec(i: number): Json {
  return smallPolicy(`p${i}_`, `db_${i}`, `db-${i}`);
}

/** The computed plan and review artifact of the fleet policy: the same for every policy up to names. */
function computed(): { plan: ComputedPlan; artifactJson: string } {
  const content = smallPolicy('fleet_', 'fleet_db', 'fleet-secret') as unknown as PolicyContent;
  const expansion = expandPolicy(content, { policyName: 'fleet' });
  if (!expansion.ok) throw new Error('the fleet policy does not expand');
  const snapshot = freshFleetSnapshot('fleet_db');
  const scope = deriveManagedScope(expansion.desired);
  const { computed: computedPlan, plan } = computePlanSummary({
    spec: content,
    desired: expansion.desired,
    scope,
    target: 'fleet-db:5432/fleet_db',
    managedDatabaseIdentity: 'bench/fleet-db:5432/fleet_db',
    passwordSources: {},
    appliedPasswordSourceVersions: {},
    allowSchemaOwnerTransfers: false,
    snapshot,
    snapshotRequestedAt: null,
  });
  const artifact = buildReviewArtifact({
    toolVersion: 'bench',
    capturedAt: NOW,
    contentDigest: computedPlan.contentDigest,
    targetLabel: 'fleet_db',
    document: 'PostgresPolicy/bench/fleet',
    mode: computedPlan.reconciliationMode,
    desired: expansion.desired,
    scope,
    snapshot,
    plan,
    facts: { executor_memberships: [], drop_roles: [], predefined_roles: [] },
  });
  return { plan: computedPlan, artifactJson: serializeReviewArtifact(artifact) };
}

/** Builds the commands of each kind for a set of policies; plan uids are filled in once the plans exist. */
export class FleetCommands {
  private readonly base = computed();
  private readonly plans = new Map<string, ReturnType<typeof buildPlan>>();

  private policyObject(p: BenchPolicy, i: number): PostgresPolicy {
    return {
      apiVersion: API_VERSION,
      kind: 'PostgresPolicy',
      metadata: { name: p.name, namespace: p.namespace, uid: p.uid, generation: 1 },
      spec: policySpec(i) as unknown as PostgresPolicy['spec'],
    };
  }

  private built(p: BenchPolicy, i: number): ReturnType<typeof buildPlan> {
    const cached = this.plans.get(`${p.namespace}/${p.name}`);
    if (cached !== undefined) return cached;
    const built = buildPlan({
      policy: this.policyObject(p, i),
      computed: this.base.plan,
      existingPlanNames: [],
      now: NOW,
      autoApprove: true,
    });
    this.plans.set(`${p.namespace}/${p.name}`, built);
    return built;
  }

  /** The command of `kind` for policy `i` (`planUid`: its plan's, for the ConfigMap's owner). */
  command(kind: CommandKind, p: BenchPolicy, i: number, planUid: string | undefined): K8sCommandV1 {
    switch (kind) {
      case 'apply-plan':
        return this.applyPlan(p, i);
      case 'apply-configmap':
        return this.applyConfigMap(p, i, planUid ?? '');
      case 'patch-plan-status':
        return this.patchPlanStatus(p, i);
      case 'patch-policy-status':
        return this.patchPolicyStatus(p, i);
      case 'record-event':
        return this.recordEvent(p, i);
      default: {
        const never: never = kind;
        return never;
      }
    }
  }

  /** The plan name of policy `p` (as buildPlan names it). */
  planName(p: BenchPolicy, i: number): string {
    return this.built(p, i).plan.metadata.name;
  }

  /** The planner's create of the first plan, with its status. */
  applyPlan(p: BenchPolicy, i: number): K8sCommandV1 {
    const { status, ...object } = toKubePlan(this.built(p, i).plan);
    return {
      v: 1,
      command: 'apply-resource',
      target: {
        apiVersion: API_VERSION,
        kind: 'PostgresPolicyPlan',
        namespace: p.namespace,
        name: object.metadata.name,
      },
      object: object as unknown as Json,
      ...(status ? { status: { ...status } as Json } : {}),
      idempotencyKey: `bench:apply-plan:${p.uid}`,
      orderingKey: policyOrderingKey(p.namespace, p.name),
    } as K8sCommandV1;
  }

  /** The planner's review ConfigMap, owned by the plan (unkeyed, as the planner sends it). */
  applyConfigMap(p: BenchPolicy, i: number, planUid: string): K8sCommandV1 {
    const plan = this.built(p, i).plan;
    const cm = buildReviewConfigMap(plan, this.base.artifactJson);
    if (cm === null) throw new Error('the review artifact does not fit a ConfigMap');
    const owned = ownedByPlan(cm, { name: plan.metadata.name, uid: planUid });
    return {
      v: 1,
      command: 'apply-resource',
      target: { apiVersion: 'v1', kind: 'ConfigMap', namespace: p.namespace, name: owned.metadata.name },
      object: { ...owned } as unknown as Json,
      idempotencyKey: `bench:apply-configmap:${p.uid}`,
    } as K8sCommandV1;
  }

  /** The executor's `Applying` write to the plan. */
  patchPlanStatus(p: BenchPolicy, i: number): K8sCommandV1 {
    const plan = this.built(p, i).plan;
    const patch = applyingPatch(plan, NOW);
    return {
      v: 1,
      command: 'patch-status',
      target: {
        apiVersion: API_VERSION,
        kind: 'PostgresPolicyPlan',
        namespace: p.namespace,
        name: patch.name,
      },
      status: { ...patch.status } as Json,
      idempotencyKey: `bench:patch-plan:${p.uid}`,
      orderingKey: policyOrderingKey(p.namespace, p.name),
    } as K8sCommandV1;
  }

  /** The planner's policy status after planning (Planned). */
  patchPolicyStatus(p: BenchPolicy, i: number): K8sCommandV1 {
    const plan = this.built(p, i).plan;
    const condition = (type: string, status: string, reason: string, message: string) => ({
      type,
      status,
      reason,
      message,
      last_transition_time: NOW,
    });
    return {
      v: 1,
      command: 'patch-status',
      target: {
        apiVersion: API_VERSION,
        kind: 'PostgresPolicy',
        namespace: p.namespace,
        name: p.name,
        uid: p.uid,
      },
      status: {
        conditions: [
          condition('Ready', 'False', 'PlanApproved', `plan ${plan.metadata.name} approved; applying`),
          condition('Reconciling', 'True', 'Planned', 'a plan is waiting to be applied'),
        ],
        content_digest: plan.spec.origin?.contentDigest ?? null,
        current_plan_ref: { name: plan.metadata.name },
        change_summary: plan.status?.changeSummary ?? null,
        last_attempted_generation: 1,
        last_reconcile_mode: 'apply',
        managed_database_identity: plan.spec.managedDatabaseIdentity,
        observed_generation: 1,
        owned_roles: [`p${i}_app`, `p${i}_reporting`, `p${i}_orders_viewer`, `p${i}_orders_editor`],
        owned_schemas: [],
        plan_warnings: [],
        transient_failure_count: 0,
      },
      idempotencyKey: `bench:patch-policy:${p.uid}`,
      orderingKey: policyOrderingKey(p.namespace, p.name),
    } as K8sCommandV1;
  }

  /** The planner's PlanApplied Event on the policy. */
  recordEvent(p: BenchPolicy, i: number): K8sCommandV1 {
    const plan = this.built(p, i).plan;
    return {
      v: 1,
      command: 'record-event',
      target: {
        apiVersion: API_VERSION,
        kind: 'PostgresPolicy',
        namespace: p.namespace,
        name: p.name,
        uid: p.uid,
      },
      event: {
        type: 'Normal',
        reason: 'PlanApplied',
        message: `plan ${plan.metadata.name} applied: 9 statements in one transaction`,
        action: 'Apply',
        component: 'rolepolicy-planner',
      },
      idempotencyKey: `bench:record-event:${p.uid}`,
      orderingKey: policyOrderingKey(p.namespace, p.name),
    } as K8sCommandV1;
  }
}
