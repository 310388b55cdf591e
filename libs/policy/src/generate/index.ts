// Public surface of generation: a live database's access (GenerateSource) -> PostgresPolicy content and YAML.
export { collapseGrants } from './collapse.js';
export {
  generatePolicy,
  type GeneratedPolicy,
  type GenerateNotes,
  type GenerateOptions,
} from './generate-policy.js';
export { renderManifest, type ManifestOptions } from './render-manifest.js';
export { globPattern, selectRoles, type RoleCandidate } from './role-selection.js';
export type { GenerateSource, InexpressibleAccess, InexpressibleKind, LeftOutRoles } from './source.js';
export { suggestProfiles, type ProfileSuggestion } from './suggest-profiles.js';
export { boundWarnings } from './bounds.js';
