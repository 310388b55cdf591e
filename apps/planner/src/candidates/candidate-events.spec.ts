// Which candidate status writes announce an Event, and what `kubectl describe` then shows.
import { candidateEventsOf } from './candidate-events.js';
import type { Candidate, CandidateStatus } from './resources.js';
import type { CandidateStep } from './steps.js';

const T = '2026-11-25T12:00:00Z';

function candidate(status?: CandidateStatus): Candidate {
  return {
    metadata: {
      name: 'login-proposal',
      namespace: 'team-a',
      uid: 'uid-1',
      generation: 1,
      creationTimestamp: T,
    },
    spec: { content: {}, policyRef: { name: 'orders' } },
    ...(status ? { status } : {}),
  };
}

function ready(status: 'True' | 'False', reason: string, message: string) {
  return [{ type: 'Ready', status, reason, message, lastTransitionTime: T }];
}

function write(before: CandidateStatus | undefined, after: CandidateStatus): CandidateStep {
  return { kind: 'writeCandidateStatus', candidate: candidate(before), status: after };
}

const reasons = (step: CandidateStep) => candidateEventsOf(step).map((e) => [e.event.type, e.event.reason]);

test('entering Planned, Promoted and Superseded each announce the phase on the candidate', () => {
  const planned: CandidateStatus = {
    phase: 'Planned',
    planRef: { name: 'orders-1a2b3c4d5e6f' },
    conditions: ready('True', 'PlanReady', 'plan ready for review'),
  };
  const [event] = candidateEventsOf(write(undefined, planned));
  expect(event).toEqual({
    regarding: {
      apiVersion: 'rolepolicy.io/v1alpha1',
      kind: 'PostgresPolicyCandidate',
      namespace: 'team-a',
      name: 'login-proposal',
      uid: 'uid-1',
    },
    event: {
      type: 'Normal',
      reason: 'CandidatePlanned',
      action: 'Plan',
      message: 'PlanReady (plan orders-1a2b3c4d5e6f): plan ready for review',
      component: 'rolepolicy-planner',
    },
  });
  expect(reasons(write(planned, { ...planned, phase: 'Promoted' }))).toEqual([
    ['Normal', 'CandidatePromoted'],
  ]);
  expect(
    reasons(
      write(planned, {
        phase: 'Superseded',
        conditions: ready('False', 'PlanDenied', 'plan orders-1a2b3c4d5e6f was denied'),
      }),
    ),
  ).toEqual([['Normal', 'CandidateSuperseded']]);
});

test('a rewrite that keeps the phase and Ready announces nothing (no Event per pass)', () => {
  const planned: CandidateStatus = { phase: 'Planned', conditions: ready('True', 'PlanReady', 'ready') };
  expect(candidateEventsOf(write(planned, { ...planned, observedGeneration: 2 }))).toEqual([]);
  const waiting: CandidateStatus = {
    phase: 'Pending',
    conditions: ready('False', 'BlockedByActivePolicy', 'the policy has not converged'),
  };
  expect(candidateEventsOf(write(waiting, { ...waiting, contentDigest: 'sha256:x' }))).toEqual([]);
});

test('Ready turning False says whether the candidate waits its turn or needs a person', () => {
  expect(
    reasons(
      write(undefined, {
        phase: 'Pending',
        conditions: ready('False', 'BlockedByActivePolicy', 'the policy has not converged'),
      }),
    ),
  ).toEqual([['Normal', 'CandidateWaiting']]);
  expect(
    reasons(
      write(
        { phase: 'Pending', conditions: ready('False', 'BlockedByActivePolicy', 'waiting') },
        { phase: 'Pending', conditions: ready('False', 'PlanningFailed', 'plan is blocked: x') },
      ),
    ),
  ).toEqual([['Warning', 'CandidatePlanningFailed']]);
});

test('other step kinds announce nothing here (plans announce their own Events)', () => {
  expect(candidateEventsOf({ kind: 'deleteCandidate', candidate: candidate(), plans: [] })).toEqual([]);
});
