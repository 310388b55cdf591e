// Which sinks an occurrence goes to: its namespace's rolepolicy-notifications ConfigMap and the cluster-wide one
// (in the operator's namespace), as the resource stream has them now. Pure over a lookup of published ConfigMaps.
import {
  NOTIFICATIONS_CONFIGMAP,
  parseSinkConfig,
  type NotificationType,
  type SinkConfigParse,
} from '@rolepolicy/policy';

/** A ConfigMap as the resource stream carries it (the gateway adds `settings` to the notifications one). */
export interface PublishedConfigMap {
  readonly metadata: {
    readonly namespace: string;
    readonly name?: string;
    readonly uid?: string;
    readonly resourceVersion?: string;
  };
  readonly keys?: readonly string[];
  readonly settings?: Readonly<Record<string, string>>;
}

/** The parse of a published notifications ConfigMap. */
export function sinkOf(configMap: PublishedConfigMap): SinkConfigParse {
  return parseSinkConfig(configMap.settings ?? {}, configMap.keys ?? Object.keys(configMap.settings ?? {}));
}

/**
 * The namespaces whose sinks receive an occurrence of `type` in `namespace`: the namespace's own sink, then the
 * cluster's; each only when its ConfigMap exists, validates and wants the type.
 */
export function sinkNamespaces(
  namespace: string,
  type: NotificationType,
  clusterNamespace: string,
  lookup: (namespace: string, name: string) => PublishedConfigMap | undefined,
): string[] {
  const out: string[] = [];
  for (const candidate of [...new Set([namespace, clusterNamespace])]) {
    const configMap = lookup(candidate, NOTIFICATIONS_CONFIGMAP);
    if (configMap === undefined) continue;
    const parsed = sinkOf(configMap);
    if (parsed.ok && parsed.sink.types.has(type)) out.push(candidate);
  }
  return out;
}
