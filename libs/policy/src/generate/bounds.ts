// The spec's collection bounds, checked on generated content: a large database can produce a policy the
// API server would reject; say so (and how to split it) instead of printing it silently.

import type { PolicyContent } from '../model/content.js';

/** Collection bounds of PostgresPolicy content (the spec's "Collection bounds"). */
const BOUNDS = {
  roles: 1024,
  grants: 4096,
  memberships: 2048,
  default_privileges: 512,
  schemas: 1024,
} as const;

/** Members of one membership entry. */
const MEMBERS = 512;

/** One line per bound the content exceeds; empty when it fits. */
export function boundWarnings(content: PolicyContent): string[] {
  const out: string[] = [];
  for (const [field, max] of Object.entries(BOUNDS)) {
    const count = (content[field as keyof typeof BOUNDS] ?? []).length;
    if (count > max) {
      out.push(
        `spec.${field} has ${count} entries, over the spec's bound of ${max}: the API server will reject this policy; split the roles into several policies (--roles / --exclude)${field === 'grants' ? ' or try --suggest-profiles' : ''}`,
      );
    }
  }
  for (const membership of content.memberships ?? []) {
    if (membership.members.length > MEMBERS) {
      out.push(
        `spec.memberships of role "${membership.role}" lists ${membership.members.length} members, over the spec's bound of ${MEMBERS}`,
      );
    }
  }
  return out;
}
