// Public surface of expansion: expandPolicy, its options and result, and the fallback role_pattern.
export { expandPolicy } from './expand-policy.js';
export type { ExpandOptions, ExpansionResult } from './expand-policy.js';
export { DEFAULT_ROLE_PATTERN } from './expand-content.js';
