// What a person does with PostgresPolicyCandidates through client-node: file a proposal, read it and the
// plans it owns (by candidate UID), see it gone, label it, and try to edit it (the spec is immutable).
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
  type PostgresPolicyCandidate,
  type PostgresPolicyPlan,
} from '@rolepolicy/kube';

const MERGE = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

/** PostgresPolicyCandidate access in one namespace, as a cluster user. */
export class CandidateResources {
  private readonly custom: CustomObjectsApi;

  constructor(
    kc: KubeConfig,
    readonly namespace: string,
  ) {
    this.custom = kc.makeApiClient(CustomObjectsApi);
  }

  private coords(kind: 'PostgresPolicyCandidate' | 'PostgresPolicyPlan') {
    return { group: GROUP, version: VERSION, plural: KIND_NAMES[kind].plural, namespace: this.namespace };
  }

  /** Files a candidate for `policy`. */
  async create(
    name: string,
    policy: string,
    content: Record<string, unknown>,
    extra: { replaces?: string; target?: { connectionRef: { secretName: string; key: string } } } = {},
  ): Promise<PostgresPolicyCandidate> {
    return (await this.custom.createNamespacedCustomObject({
      ...this.coords('PostgresPolicyCandidate'),
      body: {
        apiVersion: `${GROUP}/${VERSION}`,
        kind: 'PostgresPolicyCandidate',
        metadata: { name, namespace: this.namespace },
        spec: { content, policyRef: { name: policy }, ...extra },
      },
    })) as PostgresPolicyCandidate;
  }

  /** Reads a candidate. */
  async get(name: string): Promise<PostgresPolicyCandidate> {
    return (await this.custom.getNamespacedCustomObject({
      ...this.coords('PostgresPolicyCandidate'),
      name,
    })) as PostgresPolicyCandidate;
  }

  /** Reads a candidate, or undefined when there is none (deleted by retention, say). */
  async find(name: string): Promise<PostgresPolicyCandidate | undefined> {
    try {
      return await this.get(name);
    } catch (err) {
      if (err instanceof ApiException && err.code === 404) return undefined;
      throw err;
    }
  }

  /** Merge-patches a candidate's spec (admission refuses it: the spec is immutable). */
  async patchSpec(name: string, spec: Record<string, unknown>): Promise<unknown> {
    return this.custom.patchNamespacedCustomObject(
      { ...this.coords('PostgresPolicyCandidate'), name, body: { spec } },
      MERGE,
    );
  }

  /** Merge-patches a candidate's labels, as `kubectl label` does (the metadata is not immutable). */
  async label(name: string, labels: Record<string, string | null>): Promise<PostgresPolicyCandidate> {
    return (await this.custom.patchNamespacedCustomObject(
      { ...this.coords('PostgresPolicyCandidate'), name, body: { metadata: { labels } } },
      MERGE,
    )) as PostgresPolicyCandidate;
  }

  /** Plans controlled by the candidate's UID, oldest first. */
  async plans(name: string): Promise<PostgresPolicyPlan[]> {
    const candidate = await this.get(name);
    const list = (await this.custom.listNamespacedCustomObject(this.coords('PostgresPolicyPlan'))) as {
      items: PostgresPolicyPlan[];
    };
    return list.items
      .filter((p) => (p.metadata.ownerReferences ?? []).some((o) => o.uid === candidate.metadata.uid))
      .sort((a, b) =>
        String(a.metadata.creationTimestamp ?? '').localeCompare(String(b.metadata.creationTimestamp ?? '')),
      );
  }
}
