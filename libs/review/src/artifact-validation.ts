// The published JSON Schema of the artifact (deploy/schemas/review-artifact.v2.json) and a validator
// compiled from it. Both come from the TypeBox schema the code is typed with.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';

import { ReviewArtifactSchema, type ReviewArtifact } from './artifact.schema.js';

type AddFormats = (ajv: Ajv) => Ajv;
const isAddFormats = (value: unknown): value is AddFormats => typeof value === 'function';
/** ajv-formats is CommonJS; under NodeNext its default export arrives either wrapped or bare. */
function unwrapAddFormats(module: unknown): AddFormats {
  if (typeof module === 'object' && module !== null && 'default' in module && isAddFormats(module.default))
    return module.default;
  if (isAddFormats(module)) return module;
  throw new Error('ajv-formats exports no plugin function');
}
const addFormats = unwrapAddFormats(addFormatsModule);

/** Where the schema is published in the repository. */
export const REVIEW_ARTIFACT_SCHEMA_PATH = 'deploy/schemas/review-artifact.v2.json';

/** The JSON Schema document (draft-07), plain JSON without TypeBox's symbols. */
export function reviewArtifactJsonSchema(): Record<string, unknown> {
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    ...(JSON.parse(JSON.stringify(ReviewArtifactSchema)) as Record<string, unknown>),
  };
}

/** The text of deploy/schemas/review-artifact.v2.json. */
export function renderReviewArtifactSchema(): string {
  return `${JSON.stringify(reviewArtifactJsonSchema(), null, 2)}\n`;
}

let compiled: ValidateFunction | null = null;

/** Validates a document against the published schema; returns readable errors (`/path: message`). */
export function validateReviewArtifact(
  document: unknown,
): { ok: true; artifact: ReviewArtifact } | { ok: false; errors: string[] } {
  compiled ??= addFormats(new Ajv({ allErrors: true, strict: true })).compile(reviewArtifactJsonSchema());
  if (compiled(document)) return { ok: true, artifact: document as ReviewArtifact };
  return {
    ok: false,
    errors: (compiled.errors ?? []).map(
      (e: ErrorObject) => `${e.instancePath || '/'}: ${e.message ?? 'invalid'}`,
    ),
  };
}
