// The notifications ConfigMap (`rolepolicy-notifications`, issue 26): published in every watched namespace with
// its known settings (names and references, no secret), and the Secrets it names become readable.
import type { KubernetesObject } from '@kubernetes/client-node';
import { NOTIFICATIONS_CONFIGMAP, publishedSinkSettings, sinkSecretReferences } from '@rolepolicy/policy';
import type { WatchedKind } from './watched-kinds.js';

type Json = { readonly [key: string]: unknown };

function dataOf(object: unknown): Json {
  const data = (object as { data?: unknown } | null)?.data;
  return typeof data === 'object' && data !== null && !Array.isArray(data) ? (data as Json) : {};
}

/** True for a ConfigMap named {@link NOTIFICATIONS_CONFIGMAP}. */
export function isNotificationsConfigMap(
  kind: Pick<WatchedKind, 'kind'> | string,
  object: KubernetesObject,
): boolean {
  const name = typeof kind === 'string' ? kind : kind.kind;
  return name === 'ConfigMap' && object.metadata?.name === NOTIFICATIONS_CONFIGMAP;
}

/** The Secrets (and keys) the ConfigMap's sink reads: its URL Secret and its signing Secret. */
export function notificationSecretReferences(
  object: KubernetesObject,
): ReadonlyMap<string, ReadonlySet<string>> {
  return sinkSecretReferences(publishedSinkSettings(dataOf(object)));
}

/** The `settings` field of its published form: the values of the known settings only. */
export function notificationSettings(object: KubernetesObject): Record<string, string> {
  return publishedSinkSettings(dataOf(object));
}
