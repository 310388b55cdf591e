// The kinds the gateway watches and publishes: the five rolepolicy.io kinds plus Secrets and
// ConfigMaps, with their API paths and list calls (namespaced or cluster-wide).
import {
  CoreV1Api,
  CustomObjectsApi,
  type KubeConfig,
  type KubernetesListObject,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { RESOURCE_KINDS, type ResourceKindToken } from '@rolepolicy/contracts';
import { GROUP, KINDS, KIND_NAMES, VERSION } from '@rolepolicy/kube';

/** One watched kind. */
export type WatchedKind = {
  readonly token: ResourceKindToken;
  readonly kind: string;
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  readonly apiVersion: string;
  /** Secrets and ConfigMaps are published only when a rolepolicy.io object names or owns them. */
  readonly filtered: boolean;
};

function describe(token: ResourceKindToken): WatchedKind {
  if (token === 'secret') {
    return {
      token,
      kind: 'Secret',
      group: '',
      version: 'v1',
      plural: 'secrets',
      apiVersion: 'v1',
      filtered: true,
    };
  }
  if (token === 'configmap') {
    return {
      token,
      kind: 'ConfigMap',
      group: '',
      version: 'v1',
      plural: 'configmaps',
      apiVersion: 'v1',
      filtered: true,
    };
  }
  const kind = KINDS.find((k) => k.toLowerCase() === token);
  if (!kind) throw new Error(`no rolepolicy.io kind for subject token ${token}`);
  const plural = KIND_NAMES[kind].plural;
  return {
    token,
    kind,
    group: GROUP,
    version: VERSION,
    plural,
    apiVersion: `${GROUP}/${VERSION}`,
    filtered: false,
  };
}

/** Every kind the gateway watches, in subject-token order. */
export const WATCHED_KINDS: readonly WatchedKind[] = RESOURCE_KINDS.map(describe);

/** The kind table entry of a rolepolicy.io kind name or `Secret`/`ConfigMap`. */
export function watchedKindOf(kind: string): WatchedKind | undefined {
  return WATCHED_KINDS.find((k) => k.kind === kind);
}

/** Collection path for list and watch, in one namespace or across all. */
export function collectionPath(kind: WatchedKind, namespace: string | undefined): string {
  const base = kind.group === '' ? `/api/${kind.version}` : `/apis/${kind.group}/${kind.version}`;
  return namespace ? `${base}/namespaces/${namespace}/${kind.plural}` : `${base}/${kind.plural}`;
}

// Typed core lists carry Date objects and omit apiVersion/kind per item; publish the wire shape.
function wire(
  kind: WatchedKind,
  list: { metadata?: unknown; items: readonly unknown[] },
): KubernetesListObject<KubernetesObject> {
  const items = JSON.parse(JSON.stringify(list.items)) as KubernetesObject[];
  return {
    apiVersion: kind.apiVersion,
    kind: `${kind.kind}List`,
    metadata: JSON.parse(JSON.stringify(list.metadata ?? {})),
    items: items.map((o) => ({ ...o, apiVersion: kind.apiVersion, kind: kind.kind })),
  };
}

/** The list call an informer of `kind` uses. */
export function listFunction(
  kc: KubeConfig,
  kind: WatchedKind,
  namespace: string | undefined,
): () => Promise<KubernetesListObject<KubernetesObject>> {
  const core = kc.makeApiClient(CoreV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);
  switch (kind.token) {
    case 'secret':
      return async () =>
        wire(
          kind,
          namespace
            ? await core.listNamespacedSecret({ namespace })
            : await core.listSecretForAllNamespaces(),
        );
    case 'configmap':
      return async () =>
        wire(
          kind,
          namespace
            ? await core.listNamespacedConfigMap({ namespace })
            : await core.listConfigMapForAllNamespaces(),
        );
    default: {
      const coords = { group: kind.group, version: kind.version, plural: kind.plural };
      return async () =>
        (namespace
          ? await custom.listNamespacedCustomObject({ ...coords, namespace })
          : await custom.listClusterCustomObject(coords)) as KubernetesListObject<KubernetesObject>;
    }
  }
}
