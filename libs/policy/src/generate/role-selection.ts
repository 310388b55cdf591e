// Which roles `generate` manages: names matching any --roles glob and no --exclude glob; predefined
// (`pg_*`) roles and the bootstrap superuser are always left out. Globs know `*` and `?` only.

import { compareCodePoints } from '../canonical-order.js';
import type { LeftOutRoles } from './source.js';

/** A role as discovery lists it. */
export interface RoleCandidate {
  readonly name: string;
  readonly bootstrap: boolean;
}

/** Compiles a glob (`*` any run, `?` one character, everything else literal) to an anchored RegExp. */
export function globPattern(glob: string): RegExp {
  const body = [...glob]
    .map((ch) => (ch === '*' ? '.*' : ch === '?' ? '.' : ch.replace(/[\\^$.|+()[\]{}]/g, '\\$&')))
    .join('');
  return new RegExp(`^${body}$`, 'su');
}

/** The selected role names (sorted) and the roles left out although a glob matched them. */
export function selectRoles(
  candidates: readonly RoleCandidate[],
  include: readonly string[],
  exclude: readonly string[],
): { selected: string[]; left_out: LeftOutRoles } {
  const includes = include.map(globPattern);
  const excludes = exclude.map(globPattern);
  const selected: string[] = [];
  const predefined: string[] = [];
  const bootstrap: string[] = [];
  for (const role of candidates) {
    if (!includes.some((re) => re.test(role.name)) || excludes.some((re) => re.test(role.name))) continue;
    if (role.name.startsWith('pg_')) predefined.push(role.name);
    else if (role.bootstrap) bootstrap.push(role.name);
    else selected.push(role.name);
  }
  const sort = (list: string[]): string[] => list.sort(compareCodePoints);
  return { selected: sort(selected), left_out: { predefined: sort(predefined), bootstrap: sort(bootstrap) } };
}
