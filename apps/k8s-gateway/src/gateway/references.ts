// Which Secrets and ConfigMaps the gateway publishes: those a rolepolicy.io object names (connection
// and password Secrets) and those a rolepolicy.io object owns (plan SQL ConfigMaps, generated Secrets).
// Pure: the informer set asks these questions of its caches.

import type { SecretReadVerdict, StoredSecret } from '@rolepolicy/contracts';

type Json = { readonly [key: string]: unknown };

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The rolepolicy.io API group; objects owned by its kinds are the gateway's business. */
export const ROLEPOLICY_GROUP = 'rolepolicy.io';

/**
 * Names of Secrets an object's spec refers to: `secretRef.name`, `<x>Secret.name` (connection params)
 * `password.generate.secretName` and a candidate's `target.connectionRef.secretName`. Names only: values are never read here.
 */
export function referencedSecretNames(object: unknown): ReadonlySet<string> {
  const names = new Set<string>();
  const walk = (value: unknown, key: string): void => {
    if (Array.isArray(value)) {
      for (const item of value) walk(item, key);
      return;
    }
    if (!isObject(value)) return;
    if (/secret(ref)?$/i.test(key) && typeof value['name'] === 'string') names.add(value['name']);
    if ((key === 'generate' || key === 'connectionRef') && typeof value['secretName'] === 'string')
      names.add(value['secretName']);
    for (const [k, v] of Object.entries(value)) walk(v, k);
  };
  if (isObject(object)) walk(object['spec'], 'spec');
  return names;
}

/** True when one of the object's ownerReferences points at a rolepolicy.io kind. */
export function ownedByRolepolicy(object: unknown): boolean {
  if (!isObject(object) || !isObject(object['metadata'])) return false;
  const refs = object['metadata']['ownerReferences'];
  return (
    Array.isArray(refs) &&
    refs.some((r) => isObject(r) && String(r['apiVersion']).startsWith(`${ROLEPOLICY_GROUP}/`))
  );
}

/**
 * Which Secrets rolepolicy.io objects name, kept up to date one object change at a time (a change costs the
 * walk of that object's spec, not of every object: with hundreds of policies, recomputing everything on
 * each event was the gateway's largest CPU cost). Keys are `namespace/name`.
 */
export class SecretReferenceIndex {
  /** Object key -> the Secret keys it names. */
  private readonly byObject = new Map<string, ReadonlySet<string>>();
  /** Secret key -> how many objects name it. */
  private readonly counts = new Map<string, number>();

  /** Records the object's current references; returns the Secret keys no object named before. */
  set(objectKey: string, namespace: string, object: unknown): readonly string[] {
    const next = new Set([...referencedSecretNames(object)].map((name) => `${namespace}/${name}`));
    const previous = this.byObject.get(objectKey) ?? new Set<string>();
    const added: string[] = [];
    for (const key of next) {
      if (previous.has(key)) continue;
      const count = (this.counts.get(key) ?? 0) + 1;
      this.counts.set(key, count);
      if (count === 1) added.push(key);
    }
    for (const key of previous) if (!next.has(key)) this.release(key);
    if (next.size === 0) this.byObject.delete(objectKey);
    else this.byObject.set(objectKey, next);
    return added;
  }

  /** Forgets a deleted object's references. */
  remove(objectKey: string): void {
    for (const key of this.byObject.get(objectKey) ?? []) this.release(key);
    this.byObject.delete(objectKey);
  }

  /** Whether some object names Secret `namespace/name`. */
  has(namespace: string, name: string): boolean {
    return this.counts.has(`${namespace}/${name}`);
  }

  /** Forgets everything (a new leader term lists anew). */
  clear(): void {
    this.byObject.clear();
    this.counts.clear();
  }

  private release(key: string): void {
    const count = (this.counts.get(key) ?? 0) - 1;
    if (count <= 0) this.counts.delete(key);
    else this.counts.set(key, count);
  }
}

/**
 * Which Secrets the controller may read (SECRET_READ_POLICY, ADR 0018): `referenced` (any Secret a
 * rolepolicy.io object names, so anyone who may create one may make the controller read it) or `labelled`
 * (only those that also carry {@link READABLE_LABEL}: the Secret's writer consents).
 */
export type SecretReadPolicy = 'referenced' | 'labelled';

/** The label that admits a Secret under `SECRET_READ_POLICY=labelled`. */
export const READABLE_LABEL = { key: 'rolepolicy.io/readable', value: 'true' } as const;

/**
 * The read rule: a Secret rolepolicy.io owns (generated passwords) is always readable; any other must be named
 * by a rolepolicy.io object and, under `labelled`, carry the label. Messages name the Secret and the rule only.
 */
export function secretReadVerdict(
  policy: SecretReadPolicy,
  namespace: string,
  name: string,
  secret: StoredSecret,
  referenced: (namespace: string, name: string) => boolean,
): SecretReadVerdict {
  if (ownedByRolepolicy(secret)) return { ok: true };
  if (!referenced(namespace, name)) {
    return {
      ok: false,
      reason: 'NotReferenced',
      message: `Secret ${namespace}/${name} is neither named nor owned by a rolepolicy.io object`,
    };
  }
  if (policy === 'labelled' && secret.metadata?.labels?.[READABLE_LABEL.key] !== READABLE_LABEL.value) {
    return {
      ok: false,
      reason: 'NotLabelled',
      message:
        `Secret ${namespace}/${name} is not labelled ${READABLE_LABEL.key}: "${READABLE_LABEL.value}"; this ` +
        `installation reads only Secrets labelled for rolepolicy (SECRET_READ_POLICY=labelled): ` +
        `label the Secret to let rolepolicy use it`,
    };
  }
  return { ok: true };
}
