// Public surface of @rolepolicy/kube: API coordinates, CRD definitions and types of the five kinds,
// and the admission engine (pruning, defaults, structural validation, CEL rules) shared by emulator and CLI.
export * from './constants.js';
export * from './review-configmap.js';
export * from './types.js';
export * from './crds/crd-definitions.js';
export { CONTENT_MESSAGES } from './crds/content-schemas.js';
export { CONNECTION_MESSAGES } from './crds/postgres-policy.schema.js';
export { CANDIDATE_SPEC_IMMUTABLE } from './crds/candidate.schema.js';
export { PLAN_ORIGIN_IMMUTABLE, PLAN_WRITE_ONCE_FIELDS } from './crds/plan.schema.js';
export { REQUEST_CONDITION_TYPES, REQUEST_MESSAGES } from './crds/ephemeral.schema.js';
export { DECISION_MESSAGES, DECISION_TYPES } from './crds/decision-rules.js';
export { DURATION_PATTERN, OBJECT_TYPES, PRIVILEGES, RECONCILIATION_MODES } from './crds/value-types.js';
export * from './admission/admit.js';
export * from './admission/field-errors.js';
export * from './admission/manifests.js';
export * from './admission/crd-files.js';
export { pruneAndDefault, isJsonObject, type JsonObject } from './admission/prune-defaults.js';
export { toCelValue } from './admission/cel-rules.js';
export * from './admission/policy-types.js';
export { labelSelectorMatches, matchesResources, ruleMatches } from './admission/policy-match.js';
export * from './admission/validating-policy.js';
export * from './conformance/conformance-cases.js';
export { CONFORMANCE_NAMESPACE } from './conformance/fixtures.js';
export { applyMergePatch, getPath } from './conformance/merge-patch.js';
export * from './connection/index.js';
export * from './decisions.js';
