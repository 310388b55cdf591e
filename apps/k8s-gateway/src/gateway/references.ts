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

/** The keys of one Secret a reference may read: named ones, or every key when the reference names none. */
export type SecretKeys = ReadonlySet<string> | 'all';

/**
 * The Secrets an object's spec refers to, with the keys each reference reads: `<x>Secret {name, key}`
 * (connection params), `connection.secretRef` (`secretKey`, default `DATABASE_URL`), a candidate's
 * `target.connectionRef {secretName, key}`, `password.secretRef` (its `secretKey`; without one the key is the
 * role name after expansion, so every key) and `password.generate.secretName` (every key: rolepolicy owns it).
 * Names and keys only: values are never read here.
 */
export function referencedSecrets(object: unknown): ReadonlyMap<string, SecretKeys> {
  const found = new Map<string, SecretKeys>();
  const add = (name: string, key: string | null): void => {
    const known = found.get(name);
    if (known === 'all') return;
    if (key === null) found.set(name, 'all');
    else found.set(name, new Set([...(known ?? []), key]));
  };
  const walk = (value: unknown, key: string, parent: Json | null, parentKey: string): void => {
    if (Array.isArray(value)) {
      for (const item of value) walk(item, key, parent, parentKey);
      return;
    }
    if (!isObject(value)) return;
    if (/secret(ref)?$/i.test(key) && typeof value['name'] === 'string') {
      const named = typeof value['key'] === 'string' ? value['key'] : null;
      const sibling = parent !== null && typeof parent['secretKey'] === 'string' ? parent['secretKey'] : null;
      const connectionUrl = key === 'secretRef' && parentKey === 'connection' ? 'DATABASE_URL' : null;
      add(value['name'], named ?? (key === 'secretRef' ? (sibling ?? connectionUrl) : null));
    }
    if (key === 'connectionRef' && typeof value['secretName'] === 'string')
      add(value['secretName'], typeof value['key'] === 'string' ? value['key'] : null);
    if (key === 'generate' && typeof value['secretName'] === 'string') add(value['secretName'], null);
    for (const [k, v] of Object.entries(value)) walk(v, k, value, key);
  };
  if (isObject(object)) walk(object['spec'], 'spec', null, '');
  return found;
}

/** Names of Secrets an object's spec refers to (see {@link referencedSecrets}). */
export function referencedSecretNames(object: unknown): ReadonlySet<string> {
  return new Set(referencedSecrets(object).keys());
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
  /** Object key -> the Secret keys (`namespace/name`) it names, with the keys of each it reads. */
  private readonly byObject = new Map<string, ReadonlyMap<string, SecretKeys>>();
  /** Secret key -> the objects that name it. */
  private readonly holders = new Map<string, Set<string>>();

  /**
   * Records the object's current references (`references`: computed by the caller for an object whose spec is
   * not where they are, e.g. the notifications ConfigMap); returns the Secret keys no object named before.
   */
  set(
    objectKey: string,
    namespace: string,
    object: unknown,
    references: ReadonlyMap<string, SecretKeys> = referencedSecrets(object),
  ): readonly string[] {
    const next = new Map<string, SecretKeys>(
      [...references].map(([name, keys]) => [`${namespace}/${name}`, keys]),
    );
    const previous = this.byObject.get(objectKey) ?? new Map<string, SecretKeys>();
    const added: string[] = [];
    for (const key of next.keys()) {
      if (previous.has(key)) continue;
      const holders = this.holders.get(key) ?? new Set<string>();
      if (holders.size === 0) added.push(key);
      holders.add(objectKey);
      this.holders.set(key, holders);
    }
    for (const key of previous.keys()) if (!next.has(key)) this.release(key, objectKey);
    if (next.size === 0) this.byObject.delete(objectKey);
    else this.byObject.set(objectKey, next);
    return added;
  }

  /** Forgets a deleted object's references. */
  remove(objectKey: string): void {
    for (const key of this.byObject.get(objectKey)?.keys() ?? []) this.release(key, objectKey);
    this.byObject.delete(objectKey);
  }

  /** Whether some object names Secret `namespace/name`. */
  has(namespace: string, name: string): boolean {
    return this.holders.has(`${namespace}/${name}`);
  }

  /** The keys of Secret `namespace/name` that the objects naming it read (empty when none names it). */
  keysOf(namespace: string, name: string): SecretKeys {
    const secret = `${namespace}/${name}`;
    const keys = new Set<string>();
    for (const objectKey of this.holders.get(secret) ?? []) {
      const read = this.byObject.get(objectKey)?.get(secret);
      if (read === 'all') return 'all';
      for (const key of read ?? []) keys.add(key);
    }
    return keys;
  }

  /** Forgets everything (a new leader term lists anew). */
  clear(): void {
    this.byObject.clear();
    this.holders.clear();
  }

  private release(key: string, objectKey: string): void {
    const holders = this.holders.get(key);
    holders?.delete(objectKey);
    if (holders?.size === 0) this.holders.delete(key);
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
  keysOf: (namespace: string, name: string) => SecretKeys = () => 'all',
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
  // Only the keys the references read (security review row 11): a connection Secret's other keys stay put.
  const keys = keysOf(namespace, name);
  return keys === 'all' ? { ok: true } : { ok: true, keys: [...keys].sort() };
}
