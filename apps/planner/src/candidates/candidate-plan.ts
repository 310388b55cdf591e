// Builds the plan of a candidate: the policy's plan shape, owned by the candidate (controller reference),
// bound to the candidate content and the policy content it was planned against (`spec.origin`), never
// approved at creation whatever the policy's approval mode. Pure.
import { CONTENT_DIGEST_ENCODING } from '@rolepolicy/policy';
import {
  API_VERSION,
  buildPlan,
  labelValue,
  planName,
  PLAN_LABEL,
  sha256Hex,
  type BuiltPlan,
  type ComputedPlan,
  type OwnerReference,
  type PostgresPolicy,
  type PostgresPolicyPlan,
} from '@rolepolicy/plan-lifecycle';
import { CANDIDATE_KIND, CANDIDATE_LABEL, type Candidate } from './resources.js';

/** The controller reference that ties a plan (and its SQL ConfigMap) to its candidate. */
export function candidateOwnerReference(candidate: Candidate): OwnerReference {
  return {
    apiVersion: API_VERSION,
    kind: CANDIDATE_KIND,
    name: candidate.metadata.name,
    uid: candidate.metadata.uid,
    controller: true,
    blockOwnerDeletion: true,
  };
}

/** True when the candidate controls the plan (by uid). */
export function isCandidatePlan(plan: PostgresPolicyPlan, candidate: Candidate): boolean {
  return (plan.metadata.ownerReferences ?? []).some(
    (ref) => ref.controller === true && ref.kind === CANDIDATE_KIND && ref.uid === candidate.metadata.uid,
  );
}

/** Inputs of {@link buildCandidatePlan}. */
export interface CandidatePlanInput {
  readonly policy: PostgresPolicy;
  readonly candidate: Candidate;
  readonly computed: ComputedPlan;
  /** `contentDigest` of the candidate's spec.content. */
  readonly contentDigest: string;
  /** The policy's current content digest: the base the plan is pinned to. */
  readonly baseContentDigest: string;
  readonly existingPlanNames: readonly string[];
  readonly now: string;
}

/** The plan object and its ConfigMap (if the SQL is stored out of line), ready to create. */
export function buildCandidatePlan(input: CandidatePlanInput): BuiltPlan {
  const { policy, candidate, computed, now } = input;
  // autoApprove is false by construction: a candidate plan is only ever approved by a person.
  const built = buildPlan({ policy, computed, existingPlanNames: [], now, autoApprove: false });
  const name = planName(candidate.metadata.name, computed.changeDigest, input.existingPlanNames);
  const owner = candidateOwnerReference(candidate);
  const labels = { ...built.plan.metadata.labels, [CANDIDATE_LABEL]: labelValue(candidate.metadata.name) };
  const sqlRef = built.plan.status?.sqlRef;
  const plan: PostgresPolicyPlan = {
    ...built.plan,
    metadata: { ...built.plan.metadata, name, labels, ownerReferences: [owner] },
    spec: {
      ...built.plan.spec,
      origin: {
        kind: CANDIDATE_KIND,
        name: candidate.metadata.name,
        uid: candidate.metadata.uid,
        contentDigest: input.contentDigest,
        contentDigestEncoding: CONTENT_DIGEST_ENCODING,
        baseContentDigest: input.baseContentDigest,
        policyUid: policy.metadata.uid,
      },
    },
    status: {
      ...built.plan.status,
      revalidatedGeneration: candidate.metadata.generation,
      ...(sqlRef ? { sqlRef: { ...sqlRef, name: `${name}-sql` } } : {}),
    },
  };
  const configMap =
    built.configMap === null
      ? null
      : {
          ...built.configMap,
          metadata: {
            ...built.configMap.metadata,
            name: `${name}-sql`,
            labels: {
              ...built.configMap.metadata.labels,
              [PLAN_LABEL]: sha256Hex(name).slice(0, 32),
              [CANDIDATE_LABEL]: labels[CANDIDATE_LABEL],
            },
            ownerReferences: [owner],
          },
        };
  return { plan, configMap };
}
