// What a candidate pass reads and what it collects (steps and final statuses), apart from the decisions in
// lifecycle.ts, promotion.ts and retention.ts, which all use it. Pure.
import { contentDigest } from '@rolepolicy/policy';
import {
  planPhase,
  redactSecrets,
  supersedePatch,
  withConditions,
  type DesiredCondition,
  type PostgresPolicy,
  type PostgresPolicyPlan,
  type SupersedeCause,
} from '@rolepolicy/plan-lifecycle';
import type { Candidate, CandidatePhase, CandidateSettings, CandidateStatus } from './resources.js';
import type { CandidateStep } from './steps.js';

/** Whether the policy lets its candidates be planned now. */
export type PolicyGate = { readonly kind: 'open' } | { readonly kind: 'blocked'; readonly message: string };

/** Everything one candidate pass reads. */
export interface CandidatePassInput {
  readonly policy: PostgresPolicy;
  readonly gate: PolicyGate;
  /** Candidates in the policy's namespace naming it in `spec.policyRef`. */
  readonly candidates: readonly Candidate[];
  /** Every plan in the namespace (for ownership and free names). */
  readonly plans: readonly PostgresPolicyPlan[];
  readonly now: string;
  readonly settings: CandidateSettings;
}

const LIVE = new Set(['Pending', 'Approved']);

/** Whether a candidate plan still counts: Pending or Approved. */
export function isLive(plan: PostgresPolicyPlan): boolean {
  return LIVE.has(planPhase(plan));
}

/** `contentDigest` of a candidate's spec.content, or null when it is not an object. */
export function candidateDigest(candidate: Candidate): string | null {
  try {
    return contentDigest(candidate.spec.content).digest;
  } catch {
    return null;
  }
}

/** Collects the steps and final statuses of one pass. */
export class CandidatePass {
  readonly steps: CandidateStep[] = [];
  readonly statuses = new Map<string, { candidate: Candidate; status: CandidateStatus }>();
  readonly names: string[];
  /** Plans created in this pass, by candidate name. */
  readonly created = new Map<string, PostgresPolicyPlan>();

  constructor(readonly input: CandidatePassInput) {
    this.names = input.plans.map((p) => p.metadata.name);
  }

  supersede(plan: PostgresPolicyPlan, cause: SupersedeCause): void {
    this.steps.push({ kind: 'patchPlanStatus', patch: supersedePatch(plan, cause, this.input.now) });
  }

  status(
    candidate: Candidate,
    digest: string | null,
    phase: CandidatePhase,
    conditions: Readonly<Record<string, DesiredCondition>>,
    planRef: { readonly name: string } | null | undefined,
  ): void {
    const previous = this.statuses.get(candidate.metadata.name)?.status ?? candidate.status;
    // Messages can carry inspector and Secret-read errors: redacted like every status message.
    const redacted = Object.fromEntries(
      Object.entries(conditions).map(([type, c]) => [type, { ...c, message: redactSecrets(c.message) }]),
    );
    const status: CandidateStatus = {
      phase,
      conditions: withConditions(previous?.conditions, redacted, this.input.now),
      contentDigest: digest,
      observedGeneration: candidate.metadata.generation,
      planRef: planRef === undefined ? (previous?.planRef ?? null) : planRef,
    };
    this.statuses.set(candidate.metadata.name, { candidate, status });
  }
}
