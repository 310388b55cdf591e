// Password selection, after the mode filter so additive mode still sets passwords (engine notes 3.8).
// Only the source version travels in the change; the verifier is computed at render time.

import type { Change, ChangeOf } from '../model/change.js';
import type { DesiredRole } from '../model/desired.js';
import { compareCodePoints } from '../canonical-order.js';
import { isPredefinedRole } from '../diff/keys.js';

/** The suffix of a generated password's source version before its Secret exists. */
export const MISSING_SOURCE_SUFFIX = ':missing';

/** The blocker text for a password-managed role whose source version is unknown (fail closed). */
export function unknownPasswordSourceBlocker(role: string): string {
  return `password source version for role ${role} is unknown`;
}

/**
 * One set_password per password-managed role that is created in this plan, whose generated password is
 * not materialised yet, or whose applied source version differs from the current one.
 */
export function selectPasswords(
  changes: readonly Change[],
  roles: readonly DesiredRole[],
  passwordSources: Readonly<Record<string, string>>,
  applied: Readonly<Record<string, string>>,
): { passwords: readonly ChangeOf<'set_password'>[]; blockers: readonly string[] } {
  const created = new Set(changes.flatMap((c) => (c.kind === 'create_role' ? [c.name] : [])));
  const passwords: ChangeOf<'set_password'>[] = [];
  const blockers: string[] = [];
  for (const role of [...roles].sort((a, b) => compareCodePoints(a.name, b.name))) {
    if (role.password === null || role.external || isPredefinedRole(role.name)) continue;
    const source = Object.hasOwn(passwordSources, role.name) ? passwordSources[role.name] : undefined;
    if (source === undefined) {
      blockers.push(unknownPasswordSourceBlocker(role.name));
      continue;
    }
    const appliedSource = Object.hasOwn(applied, role.name) ? applied[role.name] : undefined;
    if (created.has(role.name) || source.endsWith(MISSING_SOURCE_SUFFIX) || appliedSource !== source) {
      passwords.push({ kind: 'set_password', name: role.name, password_source: source });
    }
  }
  return { passwords, blockers };
}
