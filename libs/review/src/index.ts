// Public surface of @rolepolicy/review: the review artifact v2 (types, JSON Schema, builder) and its
// renderings (terminal text, self-contained HTML). Pure: no I/O, no clock, no randomness.
export * from './artifact.schema.js';
export {
  buildReviewArtifact,
  formatReviewArtifactJson,
  serializeReviewArtifact,
  ReviewInputError,
  REVIEW_FINGERPRINT_ENCODING,
  type ReviewInput,
} from './build-artifact.js';
export {
  REVIEW_ARTIFACT_SCHEMA_PATH,
  renderReviewArtifactSchema,
  reviewArtifactJsonSchema,
  validateReviewArtifact,
} from './artifact-validation.js';
export type { DropRoleFacts, ReviewFacts } from './review-facts.js';
export { describeChange, formatReviewText } from './format-text.js';
export { isSensitive, priorityOf } from './recorded-changes.js';
export { COLLAPSE_GRANT_TARGETS } from './visual.js';
export { escapeHtml, renderReviewHtml } from './html/render-html.js';
export { layoutRoleGraph, DRAW_COLLAPSE_NODES, type DrawnGraph } from './html/graph-layout.js';
export * from './tool-version.js';
