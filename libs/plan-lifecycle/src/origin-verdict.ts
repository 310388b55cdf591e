// A candidate never executes SQL: a plan whose `spec.origin.kind` is PostgresPolicyCandidate runs only as the
// plan of its own policy after that policy was given exactly the candidate's content (promotion), never for
// the candidate itself. Checked on the freshly read plan and policy, before and under the database lock. Pure.
import { CONTENT_DIGEST_ENCODING, contentDigest } from '@rolepolicy/policy';
import type { PostgresPolicy, PostgresPolicyPlan } from './resources.js';

/** `spec.origin.kind` of plans made for a candidate. */
export const CANDIDATE_ORIGIN_KIND = 'PostgresPolicyCandidate';

/** Why a candidate plan may not run now, or null when it may (or the plan is not a candidate's). */
export function candidateOriginRefusal(plan: PostgresPolicyPlan, policy: PostgresPolicy): string | null {
  const origin = plan.spec.origin;
  if (origin === null || origin === undefined || origin.kind !== CANDIDATE_ORIGIN_KIND) return null;
  const name = `candidate ${origin.name}`;
  if (origin.policyUid !== policy.metadata.uid) {
    return `plan ${plan.metadata.name} was made for ${name} of another policy (uid ${origin.policyUid ?? 'none'}); a candidate never executes`;
  }
  if (plan.spec.policyRef.name !== policy.metadata.name) {
    return `plan ${plan.metadata.name} names policy ${plan.spec.policyRef.name}; a candidate never executes`;
  }
  if (origin.contentDigestEncoding !== CONTENT_DIGEST_ENCODING) {
    return `plan ${plan.metadata.name} pins content under encoding ${origin.contentDigestEncoding ?? 'none'}, not ${CONTENT_DIGEST_ENCODING}; it cannot be promoted`;
  }
  let current: string;
  try {
    current = contentDigest(policy.spec).digest;
  } catch {
    return `the content of policy ${policy.metadata.name} cannot be digested`;
  }
  if (origin.contentDigest !== current) {
    return `plan ${plan.metadata.name} belongs to ${name}, whose content the policy does not carry (policy ${current}, candidate ${origin.contentDigest ?? 'none'}); a candidate never executes unless promoted`;
  }
  return null;
}
