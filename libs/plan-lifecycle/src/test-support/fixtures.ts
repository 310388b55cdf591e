// Builders for lifecycle unit tests: policies, computed plans and an in-memory cluster that applies a
// decision's steps with merge-patch semantics, so multi-reconcile scenarios read like the spec.

import type { ChangeSummary } from '@rolepolicy/policy';
import type { ComputedPlan } from '../outcome.js';
import type {
  PostgresPolicy,
  PostgresPolicyPlan,
  PostgresPolicyPlanStatus,
  PostgresPolicyStatus,
} from '../resources.js';
import type { ExecutionRequest, ReconcileStep } from '../steps.js';

/** A change summary with `n` grants added. */
export function summary(n: number): ChangeSummary {
  return {
    default_privileges_revoked: 0,
    default_privileges_set: 0,
    grants_added: n,
    grants_revoked: 0,
    members_added: 0,
    members_removed: 0,
    passwords_set: 0,
    roles_altered: 0,
    roles_created: 0,
    roles_dropped: 0,
    schema_owners_altered: 0,
    schemas_created: 0,
    sessions_terminated: 0,
    total: n,
  };
}

/** Digest strings shaped like the engine's. */
export function digest(label: string): string {
  const hex = Buffer.from(label).toString('hex').padEnd(64, '0').slice(0, 64);
  return `sha256:${hex}`;
}

/** The encoding tag tests use. */
export const ENCODING = 'rolepolicy.io/approval-effect/v1';

/** A computed plan with `changes` changes and digest `digest(label)`. */
export function computed(label: string, changes = 1, overrides: Partial<ComputedPlan> = {}): ComputedPlan {
  return {
    changeDigest: digest(label),
    changeDigestEncoding: ENCODING,
    changeCount: changes,
    summary: summary(changes),
    warnings: [],
    ownerTransferBlocked: false,
    additiveIgnoredAbsence: false,
    blockers: [],
    identity: { physical: '7412330000000000001', physicalAvailable: true, logicalFingerprint: 'sha256:fp' },
    managedDatabaseIdentity: 'team-a/db-credentials/DATABASE_URL',
    reconciliationMode: 'authoritative',
    ownedRoles: ['app'],
    ownedSchemas: ['inventory'],
    contentDigest: 'sha256:content',
    passwordSourceVersions: {},
    passwordSourceDigest: null,
    sql: {
      sqlHash: 'a'.repeat(64),
      redactedSql: changes === 0 ? '' : 'GRANT SELECT ON TABLE "inventory"."orders" TO "app";\n',
      statementCount: changes,
    },
    snapshotRequestedAt: null,
    ...overrides,
  };
}

/** A policy in namespace team-a with generation 1 and an explicit approval unless overridden. */
export function policy(
  spec: Partial<PostgresPolicy['spec']> = {},
  meta: Partial<PostgresPolicy['metadata']> = {},
  status?: PostgresPolicyStatus,
): PostgresPolicy {
  return {
    apiVersion: 'rolepolicy.io/v1alpha1',
    kind: 'PostgresPolicy',
    metadata: {
      name: 'orders',
      namespace: 'team-a',
      uid: 'uid-orders',
      generation: 1,
      creationTimestamp: '2026-11-01T00:00:00Z',
      ...meta,
    },
    spec: { connection: { secretRef: { name: 'db-credentials' } }, mode: 'apply', approval: 'auto', ...spec },
    ...(status ? { status } : {}),
  };
}

/** Seconds after a fixed epoch, as RFC 3339. */
export function at(seconds: number): string {
  return new Date(Date.UTC(2026, 10, 21, 12, 0, 0) + seconds * 1000).toISOString();
}

function merge<T extends object>(base: T | undefined, patch: T): T {
  const out: Record<string, unknown> = { ...(base ?? {}) };
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = v;
  }
  return out as T;
}

/** An in-memory namespace: one policy, its plans, and a log of execution requests. */
export class FakeCluster {
  policy: PostgresPolicy;
  readonly plans = new Map<string, PostgresPolicyPlan>();
  readonly executions: ExecutionRequest[] = [];
  private uidSeq = 0;

  constructor(initial: PostgresPolicy) {
    this.policy = initial;
  }

  /** Every plan, in creation order. */
  planList(): PostgresPolicyPlan[] {
    return [...this.plans.values()];
  }

  /** The plan a test refers to by name (throws if absent). */
  plan(name: string): PostgresPolicyPlan {
    const p = this.plans.get(name);
    if (!p) throw new Error(`no plan ${name}`);
    return p;
  }

  /** Carries out steps in order as the gateway would (create assigns uid and creationTimestamp). */
  apply(steps: readonly ReconcileStep[], now: string): void {
    for (const step of steps) {
      switch (step.kind) {
        case 'createPlan':
          this.uidSeq += 1;
          this.plans.set(step.plan.metadata.name, {
            ...step.plan,
            metadata: { ...step.plan.metadata, uid: `plan-uid-${this.uidSeq}`, creationTimestamp: now },
          });
          break;
        case 'patchPlanStatus':
          this.patchPlan(step.patch.name, step.patch.status);
          break;
        case 'writePolicyStatus':
          this.policy = { ...this.policy, status: merge(this.policy.status, step.status) };
          break;
        case 'requestExecution':
          this.executions.push(step.request);
          break;
        case 'deletePlan':
          this.plans.delete(step.planName);
          break;
      }
    }
  }

  /** Merge-patches one plan's status (a person's decision, or the executor's phase writes). */
  patchPlan(name: string, status: PostgresPolicyPlanStatus): void {
    const plan = this.plan(name);
    this.plans.set(name, { ...plan, status: merge(plan.status, status) });
  }

  /** A person records a terminal decision together with decidedBy, as admission requires. */
  decide(name: string, decision: 'Approved' | 'Denied', now: string): void {
    const plan = this.plan(name);
    const conditions = (plan.status?.conditions ?? []).filter(
      (c) => c.type !== 'Approved' && c.type !== 'Denied',
    );
    this.patchPlan(name, {
      conditions: [
        ...conditions,
        {
          type: decision,
          status: 'True',
          reason: 'Reviewed',
          message: 'by a person',
          last_transition_time: now,
        },
      ],
      decidedBy: { username: 'alice@example.com', groups: ['dba'] },
    });
  }

  /** Edits the spec: generation advances as the API server does. */
  edit(spec: Partial<PostgresPolicy['spec']>): void {
    this.policy = {
      ...this.policy,
      spec: { ...this.policy.spec, ...spec },
      metadata: { ...this.policy.metadata, generation: this.policy.metadata.generation + 1 },
    };
  }

  /** Sets an annotation: metadata only, so the generation stays. */
  annotate(key: string, value: string): void {
    const annotations = { ...this.policy.metadata.annotations, [key]: value };
    this.policy = { ...this.policy, metadata: { ...this.policy.metadata, annotations } };
  }
}
