// expandPolicy: validated content -> the desired graph of one policy, or every error with its path.
// It runs validation first, so callers never expand content that admission would have rejected.

import type { DesiredState, PolicyContent } from '../model/index.js';
import type { ValidationError } from '../validation/errors.js';
import { analyseContent } from '../validation/validate.js';

/** Options for {@link expandPolicy}: `policyName` names generated password Secrets (`{policy}-gen-{role}`). */
export interface ExpandOptions {
  readonly policyName: string;
  /** Path prefix for errors (default `spec`). */
  readonly root?: string;
}

/** The desired graph, or every validation/expansion error. */
export type ExpansionResult =
  | { readonly ok: true; readonly desired: DesiredState }
  | { readonly ok: false; readonly errors: readonly ValidationError[] };

/**
 * Expands a policy's content into its desired state: profiles x schema bindings into roles, grants and default
 * privileges, one-off entries, resolved defaults, everything canonically sorted.
 * @example expandPolicy({ profiles: { viewer: {} }, schemas: [{ name: 'app', profiles: ['viewer'] }] }, { policyName: 'p' })
 *   // desired.roles[0].name === 'app-viewer'
 */
export function expandPolicy(content: PolicyContent, options: ExpandOptions): ExpansionResult {
  const analysis = analyseContent(content, options.root ?? 'spec', options.policyName);
  return analysis.ok ? { ok: true, desired: analysis.desired } : analysis;
}
