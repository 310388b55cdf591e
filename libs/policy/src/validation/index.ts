// Public surface of validation: validateContent, its result and error types, and the shared messages.
// Other libs import these through @rolepolicy/policy; the readers and rule passes stay internal.
export { validateContent } from './validate.js';
export type { ValidateOptions, ValidationError, ValidationResult } from './errors.js';
export { MESSAGES as VALIDATION_MESSAGES } from './messages.js';
export { normaliseValidUntil } from './timestamp.js';
export { canonicalConfigValue } from './guc.js';
export { PRIVILEGES_BY_TYPE } from './privileges.js';
