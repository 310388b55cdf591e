// Ephemeral access as a cluster user sees it in end-to-end tests: access policies and requests created,
// read, decided with a status JSON patch (as `kubectl patch --subresource=status --type=json` does), deleted.
import { CustomObjectsApi, PatchStrategy, setHeaderOptions, type KubeConfig } from '@kubernetes/client-node';
import type { EphemeralAccessPolicy, EphemeralAccessRequest, Kind } from '@rolepolicy/kube';
import { GROUP, KIND_NAMES, VERSION } from '@rolepolicy/kube';
import { waitFor } from './wait.js';

type EphemeralKind = Extract<Kind, 'EphemeralAccessPolicy' | 'EphemeralAccessRequest'>;

async function notFoundAsUndefined<T>(read: Promise<T>): Promise<T | undefined> {
  try {
    return await read;
  } catch (error) {
    if ((error as { code?: number }).code === 404) return undefined;
    throw error;
  }
}

/** An identity as `decidedBy` and `requestedBy` carry it. */
export type Identity = {
  readonly username: string;
  readonly uid?: string;
  readonly groups?: readonly string[];
};

/** Access policies and requests of one namespace. */
export class EphemeralResources {
  private readonly custom: CustomObjectsApi;

  constructor(
    kc: KubeConfig,
    private readonly namespace: string,
  ) {
    this.custom = kc.makeApiClient(CustomObjectsApi);
  }

  private coords(kind: EphemeralKind) {
    return { group: GROUP, version: VERSION, plural: KIND_NAMES[kind].plural, namespace: this.namespace };
  }

  async create<K extends EphemeralKind>(kind: K, name: string, spec: Record<string, unknown>): Promise<void> {
    await this.custom.createNamespacedCustomObject({
      ...this.coords(kind),
      body: { apiVersion: `${GROUP}/${VERSION}`, kind, metadata: { name }, spec },
    });
  }

  accessPolicy(name: string): Promise<EphemeralAccessPolicy | undefined> {
    return notFoundAsUndefined(
      this.custom.getNamespacedCustomObject({ ...this.coords('EphemeralAccessPolicy'), name }),
    ) as Promise<EphemeralAccessPolicy | undefined>;
  }

  request(name: string): Promise<EphemeralAccessRequest | undefined> {
    return notFoundAsUndefined(
      this.custom.getNamespacedCustomObject({ ...this.coords('EphemeralAccessRequest'), name }),
    ) as Promise<EphemeralAccessRequest | undefined>;
  }

  /** Waits for the request to reach `phase` and returns it. */
  phase(name: string, phase: string, timeoutMs = 30_000): Promise<EphemeralAccessRequest> {
    return waitFor(
      `request ${name} in phase ${phase}`,
      async () => {
        const r = await this.request(name);
        return r?.status?.phase === phase ? r : undefined;
      },
      { timeoutMs, describe: () => this.request(name).then((r) => r?.status) },
    );
  }

  async patchSpec(kind: EphemeralKind, name: string, spec: Record<string, unknown>): Promise<void> {
    await this.custom.patchNamespacedCustomObject(
      { ...this.coords(kind), name, body: { spec } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
  }

  /** A status JSON patch, as a person records a decision. */
  async patchStatus(kind: EphemeralKind, name: string, operations: readonly object[]): Promise<void> {
    await this.custom.patchNamespacedCustomObjectStatus(
      { ...this.coords(kind), name, body: operations },
      setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
    );
  }

  /**
   * Appends a decision condition and decidedBy in one write; `by` a username, or the whole identity the
   * API authenticates (what the rolepolicy-decisions admission policy requires of a person's decision).
   */
  async decide(
    name: string,
    type: 'Approved' | 'Denied',
    fields: { bundleHash?: string; grantedDuration?: string; message?: string } = {},
    by: string | Identity = 'security@example.com',
  ): Promise<void> {
    await this.patchStatus('EphemeralAccessRequest', name, [
      { op: 'add', path: '/status/conditions/-', value: { type, status: 'True', reason: type, ...fields } },
      { op: 'add', path: '/status/decidedBy', value: typeof by === 'string' ? { username: by } : by },
    ]);
  }

  async delete(kind: EphemeralKind, name: string): Promise<void> {
    await this.custom.deleteNamespacedCustomObject({ ...this.coords(kind), name });
  }
}
