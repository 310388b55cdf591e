// The pass after a recorded execution result: when it runs.
import { SUPERSEDED_RECHECK_SECONDS, wakeAfterResult, type AfterResultInput } from './after-result.js';

const base: AfterResultInput = {
  phase: 'Applied',
  requeueAfterSeconds: 300,
  deferredPassFree: () => false,
  hasCandidates: () => false,
};
const yes = (): boolean => true;

describe('wakeAfterResult', () => {
  it('looks again shortly after a plan the executor refused as superseded, whatever else holds', () => {
    expect(
      wakeAfterResult({ ...base, phase: 'Superseded', requeueAfterSeconds: 0, hasCandidates: yes }),
    ).toEqual({ kind: 'after', seconds: SUPERSEDED_RECHECK_SECONDS, resumeDeferred: false });
  });

  it('runs at once when the decision asks for it', () => {
    expect(wakeAfterResult({ ...base, requeueAfterSeconds: 0, deferredPassFree: yes })).toEqual({
      kind: 'now',
    });
  });

  it('resumes a pass that was put off for this result shortly, not at the interval', () => {
    expect(wakeAfterResult({ ...base, deferredPassFree: yes, hasCandidates: yes })).toEqual({
      kind: 'after',
      seconds: SUPERSEDED_RECHECK_SECONDS,
      resumeDeferred: true,
    });
  });

  it('runs a full pass at once for a policy with candidates, else waits the decided interval', () => {
    expect(wakeAfterResult({ ...base, hasCandidates: yes })).toEqual({ kind: 'now' });
    expect(wakeAfterResult(base)).toEqual({ kind: 'after', seconds: 300, resumeDeferred: false });
  });
});
