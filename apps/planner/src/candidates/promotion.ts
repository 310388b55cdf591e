// Promotion (docs/candidates.md, section 4): someone merged a candidate's content into its policy. Recognised in the
// policy's own reconcile (`recognisePromotion`, before the policy's decision) and recorded once the policy
// converged on that content (`recordPromotion`, in the candidate pass). Both are idempotent by digest, so
// a crash between the SQL and the bookkeeping re-reports instead of losing anything. Pure.
import { CONTENT_DIGEST_ENCODING, contentDigest } from '@rolepolicy/policy';
import {
  executionGate,
  planDecision,
  planPhase,
  withConditions,
  type DesiredCondition,
  type PostgresPolicy,
  type PostgresPolicyPlan,
  newestFirst,
} from '@rolepolicy/plan-lifecycle';
import { isCandidatePlan } from './candidate-plan.js';
import { candidateDigest, isLive, type CandidatePass } from './pass.js';
import { isTerminalCandidate, type Candidate } from './resources.js';
import type { CandidateStep } from './steps.js';

/** A live, approved plan of the candidate made for this policy and this content (never a preview). */
function approvedPlans(
  candidate: Candidate,
  plans: readonly PostgresPolicyPlan[],
  policy: PostgresPolicy,
  digest: string,
): PostgresPolicyPlan[] {
  if (candidate.spec.target != null) return [];
  return plans
    .filter(
      (p) =>
        isCandidatePlan(p, candidate) &&
        isLive(p) &&
        planDecision(p) === 'approved' &&
        p.spec.origin?.contentDigest === digest &&
        p.spec.origin.contentDigestEncoding === CONTENT_DIGEST_ENCODING &&
        p.spec.origin.policyUid === policy.metadata.uid,
    )
    .sort(newestFirst);
}

/** What the policy's reconcile does about a merged candidate. */
export interface PromotionRecognition {
  /** The approved candidate plan to hand to the policy's decision as its current plan (manual approval). */
  readonly handOver: PostgresPolicyPlan | null;
  /** The policy's previous content digest, kept on its status until the handed-over plan converged. */
  readonly previous: string | null;
  /** `Promoted=False` reports on candidates (written before the policy's own steps). */
  readonly reports: readonly CandidateStep[];
}

const NONE: PromotionRecognition = { handOver: null, previous: null, reports: [] };

/**
 * Recognises a promotion in the policy's reconcile. `previous` is the policy's `status.content_digest`
 * (the content of its last reconcile), `current` the digest of its spec now. Under manual approval an
 * approved candidate plan pinned to `previous` (or to `current`: a retry after an interrupted promotion)
 * becomes the policy's current plan; its execution still re-checks the digest under the lock, nothing
 * here approves anything.
 */
export function recognisePromotion(
  policy: PostgresPolicy,
  candidates: readonly Candidate[],
  plans: readonly PostgresPolicyPlan[],
  now: string,
): PromotionRecognition {
  let current: string;
  try {
    current = contentDigest(policy.spec).digest;
  } catch {
    return NONE;
  }
  const previous = policy.status?.content_digest ?? null;
  const open = candidates.filter((c) => !isTerminalCandidate(c));
  const matching = open.filter((c) => candidateDigest(c) === current);
  const gate = executionGate(policy.spec);
  const reports: CandidateStep[] = [];
  const report = (candidate: Candidate, reason: string, message: string) => {
    const update: Record<string, DesiredCondition> = { Promoted: { status: 'False', reason, message } };
    const conditions = withConditions(candidate.status?.conditions, update, now);
    const status = { ...candidate.status, conditions };
    if (JSON.stringify(status) !== JSON.stringify(candidate.status ?? {})) {
      reports.push({ kind: 'writeCandidateStatus', candidate, status });
    }
  };
  if (matching.length === 0) {
    if (previous === null || previous === current) return NONE;
    for (const c of open) {
      const digest = candidateDigest(c);
      if (digest !== null && approvedPlans(c, plans, policy, digest).length > 0) {
        report(
          c,
          'PromotionDigestMismatch',
          `the policy content changed to ${current}, which is not this candidate's approved content ${digest}; under manual approval the policy's own changes need their own decision`,
        );
      }
    }
    return { handOver: null, previous, reports };
  }
  if (gate === 'auto') return NONE; // the policy applies its own plan anyway; recordPromotion follows
  let handOver: PostgresPolicyPlan | null = null;
  for (const c of matching) {
    if (c.spec.target != null) {
      report(
        c,
        'PreviewNotPromotable',
        `the plans of a target preview (${c.spec.target.connectionRef.secretName}) never execute; the policy plans its own changes, which need their own decision`,
      );
      continue;
    }
    const approved = approvedPlans(c, plans, policy, current);
    const movedAway = plans.find(
      (p) =>
        isCandidatePlan(p, c) &&
        planPhase(p) === 'Superseded' &&
        planDecision(p) === 'approved' &&
        p.spec.origin?.contentDigest === current &&
        p.status?.conditions?.some((x) => x.type === 'Superseded' && x.reason === 'SupersededByBaseChange'),
    );
    const adoptable = approved.find(
      (p) => p.spec.origin?.baseContentDigest === previous || p.spec.origin?.baseContentDigest === current,
    );
    if (gate === 'never') {
      if (approved.length > 0) {
        report(c, 'PromotionNotExecuted', 'the policy is in observe mode, which never executes a plan');
      }
      continue;
    }
    if (adoptable !== undefined) {
      if (handOver === null) {
        handOver = adoptable;
        report(
          c,
          'PromotionInProgress',
          `approved plan ${adoptable.metadata.name} runs as the policy's plan`,
        );
      }
    } else if (approved.length > 0 || movedAway !== undefined) {
      const stale = approved[0] ?? movedAway!;
      const pin = stale.spec.origin?.baseContentDigest ?? 'none';
      report(
        c,
        'PromotionBaseChanged',
        `approved plan ${stale.metadata.name} was planned against policy content ${pin}, but the policy content moved to ${previous ?? 'none'} before the merge; the plan is not adopted and the policy plans its own changes`,
      );
    } else {
      report(
        c,
        'PromotedWithoutApproval',
        'the policy carries this content but no approved plan of this candidate exists; the policy plans its own changes, which need their own decision',
      );
    }
  }
  return { handOver, previous, reports };
}

/**
 * Records the promotion of the policy's converged content (the candidate pass runs it only while the policy
 * gate is open): the candidate that owns an Applied plan of this content (else one with an approved plan,
 * else the oldest match) becomes `Promoted`; other candidates with the same content are retired as
 * duplicates. Nothing happens when a candidate is already Promoted for this digest.
 */
export function recordPromotion(pass: CandidatePass, open: readonly Candidate[], base: string): void {
  const { input } = pass;
  // Only content the policy converged on (its status digest, written by that convergence) is promoted.
  if (input.policy.status?.content_digest !== base) return;
  if (input.candidates.some((c) => c.status?.phase === 'Promoted' && c.status.contentDigest === base)) {
    retireDuplicates(pass, open, base, null);
    return;
  }
  const matching = open.filter((c) => candidateDigest(c) === base);
  if (matching.length === 0) return;
  const owns = (c: Candidate, test: (p: PostgresPolicyPlan) => boolean) =>
    input.plans.some((p) => isCandidatePlan(p, c) && p.spec.origin?.contentDigest === base && test(p));
  const chosen =
    matching.find((c) => owns(c, (p) => planPhase(p) === 'Applied')) ??
    matching.find((c) => owns(c, (p) => planDecision(p) === 'approved')) ??
    matching[0]!;
  const applied = input.plans.find(
    (p) => isCandidatePlan(p, chosen) && planPhase(p) === 'Applied' && p.spec.origin?.contentDigest === base,
  );
  for (const p of input.plans.filter((x) => isCandidatePlan(x, chosen) && isLive(x))) {
    pass.supersede(p, {
      kind: 'Candidate',
      reason: 'Promoted',
      message: 'the policy carries this content now',
    });
  }
  const message = applied
    ? `promoted: plan ${applied.metadata.name} ran as the policy's plan`
    : `promoted: policy ${input.policy.metadata.name} carries this content and converged on it`;
  pass.status(
    chosen,
    base,
    'Promoted',
    {
      Ready: { status: 'True', reason: 'Promoted', message },
      Promoted: { status: 'True', reason: 'Promoted', message },
    },
    applied ? { name: applied.metadata.name } : undefined,
  );
  retireDuplicates(pass, open, base, chosen);
}

function retireDuplicates(
  pass: CandidatePass,
  open: readonly Candidate[],
  base: string,
  chosen: Candidate | null,
): void {
  for (const c of open) {
    if (c === chosen || candidateDigest(c) !== base) continue;
    const message = 'another candidate with the same content was promoted';
    for (const p of pass.input.plans.filter((x) => isCandidatePlan(x, c) && isLive(x))) {
      pass.supersede(p, { kind: 'Candidate', reason: 'SupersededByPromotion', message });
    }
    pass.status(
      c,
      base,
      'Superseded',
      {
        Ready: { status: 'False', reason: 'SupersededByPromotion', message },
        Superseded: { status: 'True', reason: 'SupersededByPromotion', message },
      },
      undefined,
    );
  }
}
