// Execution requests leave the planner as valid `rp.execute.request` payloads bound to the approved digest.
import { executeRequestContract, validatePayload } from '@rolepolicy/contracts';
import { decideReconcile } from './decide.js';
import { toExecuteRequestMessage } from './messages.js';
import { at, computed, policy } from './test-support/fixtures.js';

describe('execution request message', () => {
  it('is a valid ExecuteRequestV1 carrying the plan and the approved changeDigest', () => {
    const decision = decideReconcile({
      policy: policy(),
      plans: [],
      conflict: { kind: 'clear' },
      outcome: { kind: 'computed', plan: computed('A') },
      now: at(0),
      jitter: 0,
    });
    const step = decision.steps.find((s) => s.kind === 'requestExecution');
    if (step?.kind !== 'requestExecution') throw new Error('no execution requested');
    const message = toExecuteRequestMessage(step.request);
    expect(message).toMatchObject({
      v: 1,
      changeDigest: computed('A').changeDigest,
      plan: { name: step.request.planName, namespace: 'team-a' },
    });
    expect(validatePayload(executeRequestContract, message)).toMatchObject({ ok: true });
  });
});
