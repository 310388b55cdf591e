// The policy a candidate is planned as: the parent's name, uid, connection, mode and approval (its execution
// context: generated Secret names, target reference, password sources), with the candidate's content in
// place of the parent's. A target override swaps the connection for the candidate's Secret. Pure.
import { CONTENT_FIELDS } from '@rolepolicy/policy';
import type { PostgresPolicy, PostgresPolicySpec } from '@rolepolicy/plan-lifecycle';
import type { Candidate } from './resources.js';

/** The parent policy with the candidate's content (and the override connection for a preview). */
export function candidateView(policy: PostgresPolicy, candidate: Candidate): PostgresPolicy {
  const spec: Record<string, unknown> = { ...policy.spec };
  for (const field of CONTENT_FIELDS) delete spec[field];
  for (const field of CONTENT_FIELDS) {
    const value = candidate.spec.content[field];
    if (value !== undefined) spec[field] = value;
  }
  const target = candidate.spec.target?.connectionRef;
  if (target != null) {
    spec['connection'] = { secretRef: { name: target.secretName }, secretKey: target.key };
  }
  // Cast: the policy's spec with the candidate's content fields put in by name; both were validated
  // against the same content schema by the API server, which TypeScript cannot follow through the loop.
  return { ...policy, spec: spec as unknown as PostgresPolicySpec };
}

/** `namespace/secret/key` of a preview target (the digest's target reference), or null. */
export function previewTarget(candidate: Candidate): string | null {
  const target = candidate.spec.target?.connectionRef;
  return target == null ? null : `${candidate.metadata.namespace}/${target.secretName}/${target.key}`;
}
