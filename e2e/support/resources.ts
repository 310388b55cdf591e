// What a person does with kubectl, through client-node: create and edit PostgresPolicies, read their
// plans (owned by policy UID), approve or deny a plan by writing its decision to the /status subresource, and
// wait for a policy to be reconciled.
import {
  ApiException,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
} from '@kubernetes/client-node';
import {
  GROUP,
  KIND_NAMES,
  VERSION,
  type PostgresPolicy,
  type PostgresPolicyPlan,
  type PostgresPolicySpec,
} from '@rolepolicy/kube';
import { waitFor } from './wait.js';

/** Merge patch (`application/merge-patch+json`), what `kubectl patch --type merge` sends. */
const MERGE = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

/** The force-reconcile annotation of the spec. */
export const RECONCILE_REQUESTED_AT = 'rolepolicy.io/reconcile-requested-at';

/** A condition as policies and plans carry them. */
export type Condition = {
  readonly type: string;
  readonly status: string;
  readonly reason?: string | null;
  readonly message?: string | null;
};

/** The identity a person records with a decision. */
export type Decider = { readonly username: string; readonly groups?: readonly string[] };

/** The condition of `type` in `conditions`, if any. */
export function condition(
  conditions: readonly Condition[] | null | undefined,
  type: string,
): Condition | undefined {
  return (conditions ?? []).find((c) => c.type === type);
}

/** PostgresPolicy and PostgresPolicyPlan access in one namespace, as a cluster user. */
export class PolicyResources {
  readonly custom: CustomObjectsApi;

  constructor(
    kc: KubeConfig,
    readonly namespace: string,
  ) {
    this.custom = kc.makeApiClient(CustomObjectsApi);
  }

  private coords(kind: 'PostgresPolicy' | 'PostgresPolicyPlan') {
    return { group: GROUP, version: VERSION, plural: KIND_NAMES[kind].plural, namespace: this.namespace };
  }

  /** Creates a PostgresPolicy (admission applies the CRD defaults). */
  async createPolicy(
    name: string,
    spec: PostgresPolicySpec | Record<string, unknown>,
    annotations?: Record<string, string>,
  ): Promise<PostgresPolicy> {
    return (await this.custom.createNamespacedCustomObject({
      ...this.coords('PostgresPolicy'),
      body: {
        apiVersion: `${GROUP}/${VERSION}`,
        kind: 'PostgresPolicy',
        metadata: { name, namespace: this.namespace, ...(annotations ? { annotations } : {}) },
        spec,
      },
    })) as PostgresPolicy;
  }

  /** Reads a policy; undefined when it does not exist. */
  async policy(name: string): Promise<PostgresPolicy | undefined> {
    return notFoundAsUndefined(
      this.custom.getNamespacedCustomObject({ ...this.coords('PostgresPolicy'), name }),
    ) as Promise<PostgresPolicy | undefined>;
  }

  /** Merge-patches a policy's spec (an edit: bumps `metadata.generation` when something changes). */
  async patchPolicySpec(name: string, spec: Record<string, unknown>): Promise<PostgresPolicy> {
    return (await this.custom.patchNamespacedCustomObject(
      { ...this.coords('PostgresPolicy'), name, body: { spec } },
      MERGE,
    )) as PostgresPolicy;
  }

  /** Sets the force-reconcile annotation to `value` (a timestamp, by convention). */
  async requestReconcile(name: string, value = new Date().toISOString()): Promise<string> {
    await this.custom.patchNamespacedCustomObject(
      {
        ...this.coords('PostgresPolicy'),
        name,
        body: { metadata: { annotations: { [RECONCILE_REQUESTED_AT]: value } } },
      },
      MERGE,
    );
    return value;
  }

  /** Deletes a policy (its plans follow through ownerReferences). */
  async deletePolicy(name: string): Promise<void> {
    await this.custom.deleteNamespacedCustomObject({ ...this.coords('PostgresPolicy'), name });
  }

  /** Every plan owned by the policy's current UID, oldest first. */
  async plans(policyName: string): Promise<PostgresPolicyPlan[]> {
    const policy = await this.policy(policyName);
    if (!policy?.metadata.uid) return [];
    const list = (await this.custom.listNamespacedCustomObject(this.coords('PostgresPolicyPlan'))) as {
      items: PostgresPolicyPlan[];
    };
    return list.items
      .filter((p) => (p.metadata.ownerReferences ?? []).some((o) => o.uid === policy.metadata.uid))
      .sort((a, b) =>
        String(a.metadata.creationTimestamp ?? '').localeCompare(String(b.metadata.creationTimestamp ?? '')),
      );
  }

  /** Reads one plan; undefined when it does not exist. */
  async plan(name: string): Promise<PostgresPolicyPlan | undefined> {
    return notFoundAsUndefined(
      this.custom.getNamespacedCustomObject({ ...this.coords('PostgresPolicyPlan'), name }),
    ) as Promise<PostgresPolicyPlan | undefined>;
  }

  /** Approves a plan the way a person does: `Approved=True` plus `decidedBy`, through /status. */
  approve(planName: string, by: Decider = { username: 'alice@example.com' }): Promise<PostgresPolicyPlan> {
    return this.decide(planName, 'Approved', by);
  }

  /** Denies a plan: `Denied=True` plus `decidedBy`, through /status. */
  deny(planName: string, by: Decider = { username: 'bob@example.com' }): Promise<PostgresPolicyPlan> {
    return this.decide(planName, 'Denied', by);
  }

  /**
   * Read-modify-write of the plan's status with its resourceVersion (a 409 means the planner wrote
   * meanwhile: read again and retry), keeping every condition the planner set.
   */
  private async decide(
    planName: string,
    type: 'Approved' | 'Denied',
    by: Decider,
  ): Promise<PostgresPolicyPlan> {
    for (let attempt = 1; ; attempt++) {
      const plan = await this.plan(planName);
      if (!plan) throw new Error(`plan ${planName} does not exist`);
      const conditions = ((plan.status?.conditions ?? []) as Condition[]).filter((c) => c.type !== type);
      const decision = {
        type,
        status: 'True',
        reason: type === 'Approved' ? 'ApprovedByUser' : 'DeniedByUser',
        message: `${type.toLowerCase()} by ${by.username} in an end-to-end test`,
        last_transition_time: new Date().toISOString(),
      };
      try {
        return (await this.custom.patchNamespacedCustomObjectStatus(
          {
            ...this.coords('PostgresPolicyPlan'),
            name: planName,
            body: {
              metadata: { resourceVersion: plan.metadata.resourceVersion },
              status: {
                conditions: [...conditions, decision],
                decidedBy: { username: by.username, groups: [...(by.groups ?? [])] },
              },
            },
          },
          MERGE,
        )) as PostgresPolicyPlan;
      } catch (err) {
        if (err instanceof ApiException && err.code === 409 && attempt < 10) continue;
        throw err;
      }
    }
  }
}

async function notFoundAsUndefined<T>(call: Promise<T>): Promise<T | undefined> {
  try {
    return await call;
  } catch (err) {
    if (err instanceof ApiException && err.code === 404) return undefined;
    throw err;
  }
}

/**
 * Waits until policy `name` reports `Ready=True/Reconciled` at its current generation, and returns it (the
 * e2e stack's `reconciled`; the benchmarks that run the services as processes wait the same way).
 */
export async function reconciledPolicy(
  resources: PolicyResources,
  name: string,
  timeoutMs: number,
): Promise<PostgresPolicy> {
  return waitFor(
    `${name}: Ready=True/Reconciled at its generation`,
    async () => {
      const p = await resources.policy(name);
      const ready = condition(p?.status?.conditions, 'Ready');
      return ready?.status === 'True' &&
        ready.reason === 'Reconciled' &&
        p?.status?.observed_generation === p?.metadata.generation
        ? p
        : undefined;
    },
    { timeoutMs, describe: () => resources.policy(name).then((p) => p?.status) },
  );
}
