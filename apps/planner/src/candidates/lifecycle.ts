// The candidate pass of one policy reconcile (docs/candidates.md, sections 2 and 3): which candidates are planned,
// which plans are created, kept or superseded, and each candidate's status. Pure: the I/O side computes the
// plans of the candidates `plannable` names (one shared inspection) and carries out the steps.
import { CONTENT_DIGEST_ENCODING, contentDigest } from '@rolepolicy/policy';
import {
  KEEP_LABEL,
  phasePatch,
  planDecision,
  type ComputedPlan,
  type DesiredCondition,
  type PostgresPolicy,
  type PostgresPolicyPlan,
  sameEffects,
  toMillis,
  newestFirst,
} from '@rolepolicy/plan-lifecycle';
import { buildCandidatePlan, isCandidatePlan } from './candidate-plan.js';
import { candidateDigest, CandidatePass as Pass, isLive, type CandidatePassInput } from './pass.js';
import { recordPromotion } from './promotion.js';
import { candidatePhase, isTerminalCandidate, type Candidate, type CandidatePhase } from './resources.js';
import { retainTerminal } from './retention.js';
import type { CandidateStep } from './steps.js';

export { candidateDigest, type CandidatePassInput, type PolicyGate } from './pass.js';

/** The computed plan of one candidate, or why it could not be computed. */
export type CandidateOutcome =
  | { readonly kind: 'computed'; readonly plan: ComputedPlan; readonly preview: string | null }
  | { readonly kind: 'failed'; readonly reason: string; readonly message: string };

function oldestFirst(a: Candidate, b: Candidate): number {
  const ta = toMillis(a.metadata.creationTimestamp) ?? 0;
  const tb = toMillis(b.metadata.creationTimestamp) ?? 0;
  return ta - tb || (a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0);
}

/** The policy's current content digest: the base every candidate plan of this pass is pinned to. */
export function baseDigest(policy: PostgresPolicy): string {
  return contentDigest(policy.spec).digest;
}

interface Classified {
  readonly open: readonly Candidate[];
  readonly expired: ReadonlySet<string>;
  readonly overBudget: ReadonlySet<string>;
  readonly denied: ReadonlySet<string>;
}

function classify(input: CandidatePassInput): Classified {
  const nowMs = toMillis(input.now) ?? 0;
  const open = input.candidates
    .filter((c) => !isTerminalCandidate(c) && c.metadata.deletionTimestamp === undefined)
    .sort(oldestFirst);
  const expired = new Set<string>();
  const denied = new Set<string>();
  for (const c of open) {
    const created = toMillis(c.metadata.creationTimestamp);
    const keep = c.metadata.labels?.[KEEP_LABEL] === 'true';
    if (!keep && created !== null && nowMs - created > input.settings.ttlSeconds * 1000)
      expired.add(c.metadata.name);
    if (input.plans.some((p) => isCandidatePlan(p, c) && planDecision(p) === 'denied'))
      denied.add(c.metadata.name);
  }
  // Oldest keep their slots (kept ones included); the newest beyond the budget wait.
  const counted = open.filter((c) => !expired.has(c.metadata.name) && !denied.has(c.metadata.name));
  const overBudget = new Set(counted.slice(input.settings.budget).map((c) => c.metadata.name));
  return { open, expired, overBudget, denied };
}

/**
 * The candidates whose plans this pass computes: open, not expired, not denied, within budget, with valid
 * content that differs from the policy's own (equal content is a promotion, not a proposal), and only while
 * the policy's gate is open.
 */
export function plannable(input: CandidatePassInput): readonly Candidate[] {
  if (input.gate.kind !== 'open') return [];
  const { open, expired, overBudget, denied } = classify(input);
  const base = baseDigest(input.policy);
  return open.filter((c) => {
    const name = c.metadata.name;
    if (expired.has(name) || overBudget.has(name) || denied.has(name)) return false;
    const digest = candidateDigest(c);
    return digest !== null && digest !== base;
  });
}

const cond = (status: DesiredCondition['status'], reason: string, message: string): DesiredCondition => ({
  status,
  reason,
  message,
});

/** Decides one candidate pass; `outcomes` holds the computed plans of the `plannable` candidates by name. */
export function decideCandidates(
  input: CandidatePassInput,
  outcomes: ReadonlyMap<string, CandidateOutcome>,
): readonly CandidateStep[] {
  const pass = new Pass(input);
  const { open, expired, overBudget, denied } = classify(input);
  const base = baseDigest(input.policy);
  if (input.gate.kind === 'open') recordPromotion(pass, open, base);
  for (const candidate of open) {
    if (pass.statuses.has(candidate.metadata.name)) continue; // promoted or retired just now
    decideOne(pass, candidate, base, { expired, overBudget, denied }, outcomes.get(candidate.metadata.name));
  }
  applyReplaces(pass, open);
  const writes: CandidateStep[] = [];
  for (const { candidate, status } of pass.statuses.values()) {
    if (JSON.stringify(candidate.status ?? {}) === JSON.stringify(status)) continue;
    writes.push({ kind: 'writeCandidateStatus', candidate, status });
  }
  // Plans become visible before anything they replace is superseded (steps keep that order); statuses last.
  return [...pass.steps, ...writes, ...retainTerminal(input, pass.statuses)];
}

function decideOne(
  pass: Pass,
  candidate: Candidate,
  base: string,
  sets: Pick<Classified, 'expired' | 'overBudget' | 'denied'>,
  outcome: CandidateOutcome | undefined,
): void {
  const { input } = pass;
  const name = candidate.metadata.name;
  const digest = candidateDigest(candidate);
  const owned = input.plans.filter((p) => isCandidatePlan(p, candidate));
  if (digest === null) {
    pass.status(
      candidate,
      null,
      'Pending',
      { Ready: cond('False', 'PlanningFailed', 'spec.content is not an object') },
      null,
    );
    return;
  }
  if (retired(pass, candidate, digest, owned, sets)) return;
  const live = withoutStaleBase(pass, owned.filter(isLive).sort(newestFirst), base, digest);
  const current = live[0];
  const phaseNow: CandidatePhase = current ? 'Planned' : 'Pending';
  if (sets.overBudget.has(name)) {
    const message = `more than ${input.settings.budget} open candidates for policy ${input.policy.metadata.name}; waiting for a slot`;
    pass.status(
      candidate,
      digest,
      phaseNow,
      { Ready: cond('False', 'CandidateBudgetExceeded', message) },
      current ? { name: current.metadata.name } : null,
    );
    return;
  }
  if (input.gate.kind === 'blocked') {
    pass.status(
      candidate,
      digest,
      phaseNow,
      { Ready: cond('False', 'BlockedByActivePolicy', input.gate.message) },
      current ? { name: current.metadata.name } : null,
    );
    return;
  }
  if (digest === base) return; // promotion (recordPromotion) owns this candidate
  if (outcome === undefined) return;
  recordOutcome(pass, candidate, { digest, base, live, phaseNow }, outcome);
}

/** A denied or expired candidate is superseded with its live plans; true when this one was. */
function retired(
  pass: Pass,
  candidate: Candidate,
  digest: string,
  owned: readonly PostgresPolicyPlan[],
  sets: Pick<Classified, 'expired' | 'denied'>,
): boolean {
  const { input } = pass;
  const name = candidate.metadata.name;
  const live = owned.filter(isLive).sort(newestFirst);
  if (sets.denied.has(name)) {
    const deniedPlan = owned.find((p) => planDecision(p) === 'denied');
    for (const p of live) {
      if (planDecision(p) === 'denied')
        pass.steps.push({ kind: 'patchPlanStatus', patch: phasePatch(p, 'Rejected') });
      else
        pass.supersede(p, {
          kind: 'Candidate',
          reason: 'PlanDenied',
          message: `plan ${deniedPlan?.metadata.name} of this candidate was denied`,
        });
    }
    const message = `plan ${deniedPlan?.metadata.name ?? ''} was denied; file a successor candidate with spec.replaces to revise the proposal`;
    pass.status(
      candidate,
      digest,
      'Superseded',
      { Ready: cond('False', 'PlanDenied', message), Superseded: cond('True', 'PlanDenied', message) },
      undefined,
    );
    return true;
  }
  if (sets.expired.has(name)) {
    const message = `open for more than ${input.settings.ttlSeconds}s without promotion`;
    for (const p of live)
      pass.supersede(p, { kind: 'Candidate', reason: 'Expired', message: `candidate ${name} expired` });
    pass.status(
      candidate,
      digest,
      'Superseded',
      { Ready: cond('False', 'Expired', message), Superseded: cond('True', 'Expired', message) },
      undefined,
    );
    return true;
  }
  return false;
}

/**
 * The base moved: a live plan pinned to other policy content no longer describes this proposal's effect
 * (except while the policy carries the candidate's own content: the mid-promotion state). Supersedes those
 * and returns the live plans left.
 */
function withoutStaleBase(
  pass: Pass,
  live: readonly PostgresPolicyPlan[],
  base: string,
  digest: string,
): readonly PostgresPolicyPlan[] {
  if (base === digest) return live;
  const stale = live.filter(
    (p) =>
      p.spec.origin?.baseContentDigest !== base ||
      p.spec.origin?.contentDigestEncoding !== CONTENT_DIGEST_ENCODING ||
      p.spec.origin?.policyUid !== pass.input.policy.metadata.uid,
  );
  for (const p of stale) {
    pass.supersede(p, {
      kind: 'Candidate',
      reason: 'SupersededByBaseChange',
      message: `the policy content moved from ${p.spec.origin?.baseContentDigest ?? 'none'} to ${base}`,
    });
  }
  return live.filter((p) => !stale.includes(p));
}

interface Planning {
  readonly digest: string;
  readonly base: string;
  readonly live: readonly PostgresPolicyPlan[];
  readonly phaseNow: CandidatePhase;
}

/** The candidate's computed plan: kept, created, or why there is none; its live plans otherwise superseded. */
function recordOutcome(pass: Pass, candidate: Candidate, at: Planning, outcome: CandidateOutcome): void {
  const { input } = pass;
  const { digest, base, live, phaseNow } = at;
  const name = candidate.metadata.name;
  if (outcome.kind === 'failed') {
    pass.status(
      candidate,
      digest,
      phaseNow,
      { Ready: cond('False', 'PlanningFailed', `${outcome.reason}: ${outcome.message}`) },
      undefined,
    );
    return;
  }
  const computed = outcome.plan;
  if (computed.blockers.length > 0) {
    pass.status(
      candidate,
      digest,
      phaseNow,
      { Ready: cond('False', 'PlanningFailed', `plan is blocked: ${computed.blockers.join('; ')}`) },
      undefined,
    );
    return;
  }
  if (computed.changeCount === 0) {
    for (const p of live) pass.supersede(p, { kind: 'EffectsCleared' });
    pass.status(
      candidate,
      digest,
      'Planned',
      { Ready: cond('True', 'NoEffects', 'the proposal changes nothing in the database') },
      null,
    );
    return;
  }
  const keep = live.find((p) => sameEffects(p, computed) && p.spec.origin?.contentDigest === digest);
  let planNameNow: string;
  if (keep) {
    planNameNow = keep.metadata.name;
  } else {
    const built = buildCandidatePlan({
      policy: input.policy,
      candidate,
      computed,
      contentDigest: digest,
      baseContentDigest: base,
      existingPlanNames: pass.names,
      now: input.now,
    });
    pass.names.push(built.plan.metadata.name);
    pass.steps.push({ kind: 'createPlan', ...built });
    pass.created.set(name, built.plan);
    planNameNow = built.plan.metadata.name;
  }
  for (const p of live) if (p !== keep) pass.supersede(p, { kind: 'ReplacedByNewerPlan', by: planNameNow });
  const message =
    outcome.preview === null
      ? `plan ${planNameNow} awaits review; it runs only if the policy is given this content`
      : `preview plan ${planNameNow} against ${outcome.preview}; it can never execute`;
  pass.status(
    candidate,
    digest,
    'Planned',
    { Ready: cond('True', 'Planned', message) },
    { name: planNameNow },
  );
}

/** `spec.replaces`: the predecessor is superseded once its successor has a plan (or planned no effects). */
function applyReplaces(pass: Pass, open: readonly Candidate[]): void {
  for (const successor of open) {
    const predecessorName = successor.spec.replaces;
    if (!predecessorName || predecessorName === successor.metadata.name) continue;
    const decided = pass.statuses.get(successor.metadata.name)?.status ?? successor.status;
    const ready = decided?.conditions?.find((c) => c.type === 'Ready');
    const planned =
      decided?.phase === 'Planned' && (decided.planRef != null || ready?.reason === 'NoEffects');
    if (!planned) continue;
    const predecessor = open.find((c) => c.metadata.name === predecessorName);
    if (predecessor === undefined || candidatePhase(predecessor) === 'Superseded') continue;
    const message = `replaced by candidate ${successor.metadata.name}`;
    const created = pass.created.get(predecessor.metadata.name);
    const plans = pass.input.plans.filter((x) => isCandidatePlan(x, predecessor) && isLive(x));
    for (const p of created ? [...plans, created] : plans) {
      pass.supersede(p, { kind: 'Candidate', reason: 'Replaced', message });
    }
    pass.status(
      predecessor,
      candidateDigest(predecessor),
      'Superseded',
      { Ready: cond('False', 'Replaced', message), Superseded: cond('True', 'Replaced', message) },
      undefined,
    );
  }
}
