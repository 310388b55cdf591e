// The content digest fills the policy CRD's API defaults (libs/policy CONTENT_API_DEFAULTS, ADR 0007). This pins
// that table to the schema the CRD is generated from: a default added to the CRD without the digest knowing
// would make a candidate written exactly like its policy never promote.
import { CONTENT_API_DEFAULTS, CONTENT_FIELDS } from '@rolepolicy/policy';
import { PostgresPolicySpec } from './postgres-policy.schema.js';
import { CandidateContent } from './candidate.schema.js';

interface SchemaNode {
  readonly default?: unknown;
  readonly properties?: Record<string, SchemaNode>;
  readonly items?: SchemaNode;
  readonly anyOf?: readonly SchemaNode[];
  readonly additionalProperties?: SchemaNode | boolean;
}

function collect(node: SchemaNode, path: string[], out: Map<string, unknown>): void {
  if (node.default !== undefined) out.set(path.join('.'), node.default);
  for (const [key, child] of Object.entries(node.properties ?? {})) collect(child, [...path, key], out);
  if (node.items !== undefined) collect(node.items, [...path, '[]'], out);
  for (const variant of node.anyOf ?? []) collect(variant, path, out);
  if (typeof node.additionalProperties === 'object') collect(node.additionalProperties, [...path, '{}'], out);
}

function contentDefaults(spec: SchemaNode): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const field of CONTENT_FIELDS) {
    const child = spec.properties?.[field];
    if (child !== undefined) collect(child, [field], out);
  }
  return out;
}

describe('content API defaults (digest vs CRD)', () => {
  it('the digest fills exactly the scalar defaults the policy CRD stores under its content fields', () => {
    const scalars = [...contentDefaults(PostgresPolicySpec as SchemaNode)].filter(
      ([, value]) => typeof value !== 'object',
    );
    const table = CONTENT_API_DEFAULTS.map((d) => [d.path.join('.'), d.value]);
    expect(Object.fromEntries(scalars)).toEqual(Object.fromEntries(table));
  });

  it('the remaining policy defaults are empty lists and maps, which the digest drops like absent fields', () => {
    const others = [...contentDefaults(PostgresPolicySpec as SchemaNode).values()].filter(
      (value) => typeof value === 'object',
    );
    for (const value of others) expect(value === null ? null : Object.keys(value as object)).toEqual([]);
  });

  it('candidate content carries no defaults at all', () => {
    expect(contentDefaults(CandidateContent as SchemaNode).size).toBe(0);
  });
});
