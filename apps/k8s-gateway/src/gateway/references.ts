// Which Secrets and ConfigMaps the gateway publishes: those a rolepolicy.io object names (connection
// and password Secrets) and those a rolepolicy.io object owns (plan SQL ConfigMaps, generated Secrets).
// Pure: the informer set asks these questions of its caches.

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
