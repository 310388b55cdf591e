// The diff's public surface: the full (unfiltered) diff and the unmanaged-role filter.
// Key helpers are exported for the renderer and the review artifact, which key changes the same way.
export { diff, type DiffOptions, type DiffResult } from './diff.js';
export { filterUnmanaged, unmanagedRoles } from './unmanaged.js';
export { normaliseWildcards, type NormalisedGrants } from './wildcards.js';
export { builtInPublicDefaults, type DefaultPrivilegeChange } from './diff-defaults.js';
export { isCreateRoleSelfGrant } from './diff-memberships.js';
export { WILDCARD, isPredefinedRole, isPublic, type GrantKey, type DefaultPrivilegeKey } from './keys.js';
