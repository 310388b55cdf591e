// What the gateway publishes of an object on the resource stream, which persists it: never a secret value.
// Secrets and ConfigMaps travel as metadata, key names and a keyed fingerprint; every object loses the
// annotations and fields that can copy values (kubectl's last-applied configuration, managedFields); a
// literal connection password in a PostgresPolicy becomes a placeholder; the notifications ConfigMap adds its known
// settings. Pure, apart from the HMAC.
import { createHmac } from 'node:crypto';
import type { KubernetesObject } from '@kubernetes/client-node';
import { REDACTED_VALUE } from '@rolepolicy/contracts';
import { isNotificationsConfigMap, notificationSettings } from './notifications-configmap.js';

/** kubectl's copy of the last applied manifest: it holds a Secret's data (and a literal password) verbatim. */
const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Metadata without managedFields and without annotations that can carry values. */
function publishedMetadata(metadata: Json, keepAnnotation: (key: string) => boolean): Json {
  const { managedFields: _managed, annotations, ...rest } = metadata;
  if (!isObject(annotations)) return rest;
  const kept = Object.fromEntries(
    Object.entries(annotations).filter(([k]) => k !== LAST_APPLIED && keepAnnotation(k)),
  );
  return Object.keys(kept).length === 0 ? rest : { ...rest, annotations: kept };
}

/**
 * `hmac-sha256:<hex>` over the object's values (each key with its base64 value, keys sorted): changes
 * whenever a value changes, and tells nothing about a low-entropy value without the installation's key.
 */
export function valueFingerprint(values: Readonly<Record<string, string>>, key: Uint8Array): string {
  const entries = Object.entries(values).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `hmac-sha256:${createHmac('sha256', key).update(JSON.stringify(entries)).digest('hex')}`;
}

/** Every value of a Secret or ConfigMap as base64, whichever field holds it. */
function valuesOf(object: Json): Record<string, string> {
  const out: Record<string, string> = {};
  const b64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64');
  for (const field of ['data', 'binaryData'] as const) {
    const values = object[field];
    if (!isObject(values)) continue;
    for (const [k, v] of Object.entries(values))
      out[k] = field === 'data' && object['kind'] === 'ConfigMap' ? b64(String(v)) : String(v);
  }
  const plain = object['stringData'];
  if (isObject(plain)) for (const [k, v] of Object.entries(plain)) out[k] = b64(String(v));
  return out;
}

/** The form of `object` (of `kind`) that may rest in the resource stream. */
export function publishedForm(
  kind: string,
  object: KubernetesObject,
  fingerprintKey: Uint8Array,
): KubernetesObject {
  const source: Json = { ...object };
  const metadata = isObject(source['metadata']) ? source['metadata'] : {};
  if (kind === 'Secret' || kind === 'ConfigMap') {
    const values = valuesOf(source);
    return {
      apiVersion: object.apiVersion ?? 'v1',
      kind,
      metadata: publishedMetadata(metadata, (k) => k.startsWith('rolepolicy.io/')),
      ...(typeof source['type'] === 'string' ? { type: source['type'] } : {}),
      keys: Object.keys(values).sort(),
      fingerprint: valueFingerprint(values, fingerprintKey),
      // The notifications ConfigMap's settings are names and references: the access-scheduler reads them here.
      ...(isNotificationsConfigMap(kind, object) ? { settings: notificationSettings(object) } : {}),
    } as KubernetesObject;
  }
  const { data: _d, stringData: _s, binaryData: _b, ...rest } = source;
  const out: Json = { ...rest, metadata: publishedMetadata(metadata, () => true) };
  const spec = out['spec'];
  if (kind === 'PostgresPolicy' && isObject(spec) && isObject(spec['connection'])) {
    const params = spec['connection']['params'];
    if (isObject(params) && params['password'] != null) {
      out['spec'] = {
        ...spec,
        connection: { ...spec['connection'], params: { ...params, password: REDACTED_VALUE } },
      };
    }
  }
  // Cast: `out` is the API's object with value fields replaced, a JSON object of the same kind.
  return out as unknown as KubernetesObject;
}
