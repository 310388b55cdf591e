// validateContent: the one entry point that turns untrusted input into typed PolicyContent, running the whole
// pipeline (structure, cross-entry rules, expansion checks) so admission and the CLI see every error at once.

import type { DesiredState, PolicyContent } from '../model/index.js';
import { expandContent } from '../expansion/expand-content.js';
import type { ErrorSink, ValidateOptions, ValidationError, ValidationResult } from './errors.js';
import { isObject, type Locations } from './reader.js';
import { checkCrossEntryRules } from './rules.js';
import { readContent } from './structure.js';

/** Result of the full pipeline: content and desired graph when there were no errors. */
export type Analysis =
  | { readonly ok: true; readonly content: PolicyContent; readonly desired: DesiredState }
  | { readonly ok: false; readonly errors: readonly ValidationError[] };

function dedupe(errors: readonly ValidationError[]): readonly ValidationError[] {
  const seen = new Set<string>();
  return errors.filter((e) => {
    const key = `${e.path}\u0000${e.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** Runs validation and expansion once; shared by {@link validateContent} and expandPolicy. */
export function analyseContent(raw: unknown, root: string, policyName: string): Analysis {
  const locations: Locations = new Map();
  const sink: ErrorSink & { locations: Locations } = { errors: [], locations };
  const content = readContent(sink, raw, root);
  if (content === undefined) return { ok: false, errors: dedupe(sink.errors) };
  const rawProfiles = isObject(raw) && isObject(raw['profiles']) ? Object.keys(raw['profiles']) : [];
  checkCrossEntryRules(sink, content, locations, root, new Set(rawProfiles));
  const desired = expandContent(sink, { content, locations, root, policyName });
  if (sink.errors.length > 0) return { ok: false, errors: dedupe(sink.errors) };
  return { ok: true, content, desired };
}

/**
 * Validates policy content (a PostgresPolicy.spec or a candidate's spec.content) against every bound and rule
 * of the spec, including those only visible after profile expansion. Never throws on any input.
 * @example validateContent({ roles: [{ name: 'app' }] }) // { ok: true, content: { roles: [{ name: 'app' }] } }
 * @example validateContent({ grants: [{}] }) // errors at spec.grants[0].role, .object and .privileges: `is required`
 */
export function validateContent(content: unknown, options: ValidateOptions = {}): ValidationResult {
  const analysis = analyseContent(content, options.root ?? 'spec', 'policy');
  return analysis.ok ? { ok: true, content: analysis.content } : analysis;
}
