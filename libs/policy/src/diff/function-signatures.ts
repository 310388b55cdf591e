// Maps declared function signatures (`f(integer)`) to the catalog's identity keys (`f(p_id integer)`).
// Without this a manifest signature never equals the inspected key and the plan grants and revokes forever.

import type { GrantEntry } from '../model/state.js';
import type { FunctionSignature } from '../model/snapshot.js';
import { WILDCARD } from './keys.js';

/** Desired grants with function names resolved, plus one blocker per present grant on a missing function. */
export interface ResolvedFunctionGrants {
  readonly grants: readonly GrantEntry[];
  readonly absences: readonly GrantEntry[];
  readonly blockers: readonly string[];
}

/** The blocker text for a declared function the catalog could not resolve. */
export function missingFunctionBlocker(schema: string, declared: string): string {
  return `function ${schema}.${declared} does not exist`;
}

/**
 * Rewrites named function targets through `signatures`. A present grant on a missing function is a
 * blocker (the GRANT would fail at apply); an absence on a missing function is trivially satisfied.
 * Names the catalog did not look up are kept as written.
 */
export function resolveFunctionGrants(
  grants: readonly GrantEntry[],
  absences: readonly GrantEntry[],
  signatures: readonly FunctionSignature[],
): ResolvedFunctionGrants {
  const byDeclared = new Map<string, FunctionSignature>();
  for (const s of signatures) byDeclared.set(JSON.stringify([s.schema, s.declared]), s);
  const blockers: string[] = [];
  const resolve = (entry: GrantEntry, present: boolean): GrantEntry | null => {
    if (entry.object_type !== 'function' || entry.name === null || entry.name === WILDCARD) return entry;
    if (entry.schema === null) return entry;
    const signature = byDeclared.get(JSON.stringify([entry.schema, entry.name]));
    if (signature === undefined) return entry;
    if (signature.identity === null) {
      if (present) blockers.push(missingFunctionBlocker(entry.schema, entry.name));
      return null;
    }
    return { ...entry, name: signature.identity };
  };
  const keep = (e: GrantEntry | null): e is GrantEntry => e !== null;
  return {
    grants: grants.map((g) => resolve(g, true)).filter(keep),
    absences: absences.map((g) => resolve(g, false)).filter(keep),
    blockers,
  };
}
