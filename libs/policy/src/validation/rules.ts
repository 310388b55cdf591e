// Cross-entry rules that need no expansion: list-map key uniqueness (roles, schemas, retirements), profile
// references, duplicate membership edges, and `exclusive` only on pg_* or external roles.

import type { PolicyContent } from '../model/index.js';
import { type ErrorSink, keyPath, report } from './errors.js';
import { MESSAGES } from './messages.js';
import type { Locations } from './reader.js';

/** Runs the cross-entry rules over structurally valid content. */
export function checkCrossEntryRules(
  sink: ErrorSink,
  content: PolicyContent,
  locations: Locations,
  root: string,
  /** Every profile key in the input, valid or not, so a broken profile is not also reported as unknown. */
  profileNames: ReadonlySet<string>,
): void {
  const at = (entry: object, field?: string): string => {
    const path = locations.get(entry) ?? root;
    return field === undefined ? path : keyPath(path, field);
  };

  const roleNames = new Set<string>();
  const external = new Set<string>();
  for (const role of content.roles ?? []) {
    if (roleNames.has(role.name)) report(sink, at(role, 'name'), MESSAGES.duplicateRole(role.name));
    roleNames.add(role.name);
    if (role.external === true) external.add(role.name);
  }

  for (const membership of content.memberships ?? []) {
    if (
      membership.exclusive === true &&
      !membership.role.startsWith('pg_') &&
      !external.has(membership.role)
    ) {
      report(sink, at(membership, 'exclusive'), MESSAGES.exclusiveNotAllowed(membership.role));
    }
  }
  const edges = new Set<string>();
  for (const membership of content.memberships ?? []) {
    for (const member of membership.members) {
      const key = JSON.stringify([membership.role, member.name]);
      if (edges.has(key))
        report(sink, at(member, 'name'), MESSAGES.duplicateMember(membership.role, member.name));
      edges.add(key);
    }
  }

  const bindings = new Set<string>();
  for (const binding of content.schemas ?? []) {
    if (bindings.has(binding.name))
      report(sink, at(binding, 'name'), MESSAGES.duplicateSchemaBinding(binding.name));
    bindings.add(binding.name);
    (binding.profiles ?? []).forEach((profile, index) => {
      if (!profileNames.has(profile)) {
        report(sink, `${at(binding, 'profiles')}[${index}]`, MESSAGES.unknownProfile(profile));
      }
    });
  }

  const retired = new Set<string>();
  for (const retirement of content.retirements ?? []) {
    if (retired.has(retirement.role))
      report(sink, at(retirement, 'role'), MESSAGES.duplicateRetirement(retirement.role));
    retired.add(retirement.role);
  }
}
