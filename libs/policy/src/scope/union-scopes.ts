// One inspection for several policies' contents on one database (the candidates of a policy): the union of
// their managed scopes. The diff masks a snapshot to each desired state's own scope, so every content planned
// against the union read gets the effects it would get from its own read. Pure.
import { compareCodePoints } from '../canonical-order.js';
import { canonicalJson } from '../digest/canonical-json.js';
import type { ManagedScope } from '../model/scope.js';

function strings(lists: readonly (readonly string[])[]): string[] {
  return [...new Set(lists.flat())].sort(compareCodePoints);
}

function objects<T>(lists: readonly (readonly T[])[]): T[] {
  const byKey = new Map<string, T>();
  for (const item of lists.flat()) byKey.set(canonicalJson(item), item);
  return [...byKey.entries()].sort(([a], [b]) => compareCodePoints(a, b)).map(([, item]) => item);
}

/** The union of managed scopes (each list de-duplicated and sorted); throws on an empty input. */
export function unionScopes(scopes: readonly ManagedScope[]): ManagedScope {
  if (scopes.length === 0) throw new TypeError('unionScopes needs at least one scope');
  if (scopes.length === 1) return scopes[0]!;
  const all = <K extends keyof ManagedScope>(key: K) => scopes.map((s) => s[key]);
  return {
    roles: strings(all('roles')),
    membership_grantors: strings(all('membership_grantors')),
    schemas: strings(all('schemas')),
    owned_schemas: strings(all('owned_schemas')),
    wildcards: objects(all('wildcards')),
    public_objects: objects(all('public_objects')),
    default_privilege_scopes: objects(all('default_privilege_scopes')),
    include_database_privileges: scopes.some((s) => s.include_database_privileges),
    database_targets: strings(all('database_targets')),
    function_signatures: objects(all('function_signatures')),
  };
}
