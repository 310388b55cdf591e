// The published schema (deploy/schemas/review-artifact.v2.json) is generated from the TypeBox types the code
// uses; this keeps the checked-in file identical. Regenerate with UPDATE_REVIEW_SCHEMA=1 after a deliberate change.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import {
  REVIEW_ARTIFACT_SCHEMA_PATH,
  buildReviewArtifact,
  renderReviewArtifactSchema,
  validateReviewArtifact,
} from './index.js';
import { realisticReviewInput } from './test-support/realistic.js';

const file = join(process.cwd(), REVIEW_ARTIFACT_SCHEMA_PATH);

describe('published review artifact schema', () => {
  it('the checked-in JSON Schema equals the one generated from the TypeBox types', () => {
    if (process.env['UPDATE_REVIEW_SCHEMA'] === '1') writeFileSync(file, renderReviewArtifactSchema());
    expect(readFileSync(file, 'utf8')).toBe(renderReviewArtifactSchema());
  });

  it('forbids extra properties at the top level and in every object it defines', () => {
    const schema = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    const open: string[] = [];
    const walk = (node: unknown, path: string): void => {
      if (Array.isArray(node)) return node.forEach((n, i) => walk(n, `${path}[${i}]`));
      if (node === null || typeof node !== 'object') return;
      const record = node as Record<string, unknown>;
      if (record['type'] === 'object' && record['additionalProperties'] !== false) open.push(path);
      for (const [key, value] of Object.entries(record)) walk(value, `${path}.${key}`);
    };
    walk(schema, '$');
    expect(open).toEqual([]);
    expect(schema['required']).toEqual([
      'schema_version',
      'provenance',
      'context',
      'preflight',
      'recorded',
      'exploration',
    ]);
  });

  it('rejects an extra top-level property, a wrong schema_version and a missing review_fingerprint', () => {
    const artifact = buildReviewArtifact(realisticReviewInput(150019));
    expect(validateReviewArtifact(artifact).ok).toBe(true);
    expect(validateReviewArtifact({ ...artifact, extra: 1 }).ok).toBe(false);
    expect(validateReviewArtifact({ ...artifact, schema_version: 'rolepolicy.review-artifact.v1' }).ok).toBe(
      false,
    );
    const { review_fingerprint: _dropped, ...recorded } = artifact.recorded;
    const result = validateReviewArtifact({ ...artifact, recorded });
    expect(result).toEqual({
      ok: false,
      errors: [expect.stringContaining("must have required property 'review_fingerprint'")],
    });
  });
});
