// Public surface of the policy engine: pure content model, validation, expansion, diff, SQL and digests.
export {
  compareCodePoints,
  compareGrantees,
  compareGrantKeys,
  compareDefaultKeys,
  compareMembershipKeys,
  compareNullable,
} from './canonical-order.js';
export * from './model/index.js';
export * from './sql/index.js';
export * from './password/index.js';
export * from './diff/index.js';
export * from './plan/index.js';
export * from './interpreter/index.js';
export * from './digest/index.js';
export * from './validation/index.js';
export * from './expansion/index.js';
export * from './scope/index.js';
export * from './identity/identity-verdict.js';
export * from './ephemeral/index.js';
export * from './redaction/index.js';
export * from './notifications/index.js';
export * from './generate/index.js';
