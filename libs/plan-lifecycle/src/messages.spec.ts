// Execution requests leave the planner as valid `rp.execute.request` v2 payloads bound to the approved digest.
import { executeRequestContract, validatePayload } from '@rolepolicy/contracts';
import { decideReconcile } from './decide.js';
import { toExecuteRequestMessage, type ExecutionContext } from './messages.js';
import { at, computed, policy } from './test-support/fixtures.js';

const context: ExecutionContext = {
  target: 'team-a/db/DATABASE_URL',
  content: { roles: [] },
  mode: 'authoritative',
  allowSchemaOwnerTransfers: false,
  requirePhysicalIdentity: false,
  approvedIdentity: { physical: '7300000000000000001', logical: 'sha256:ab' },
  passwordSources: { app: 'app-pw:app:12' },
  appliedPasswordSourceVersions: {},
};

/** The execution step a pass that computed plan A asks for. */
function requestedExecution() {
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
  return step;
}

describe('execution request message', () => {
  it('is a valid ExecuteRequestV2 carrying plan, policy uid, approved digest and encoding, and the digested target', () => {
    const step = requestedExecution();
    const message = toExecuteRequestMessage(step.request, context);
    expect(message).toMatchObject({
      v: 2,
      changeDigest: computed('A').changeDigest,
      changeDigestEncoding: computed('A').changeDigestEncoding,
      plan: { name: step.request.planName, namespace: 'team-a' },
      policy: { name: policy().metadata.name, uid: policy().metadata.uid },
      target: 'team-a/db/DATABASE_URL',
      passwordSources: { app: 'app-pw:app:12' },
    });
    expect(validatePayload(executeRequestContract, message)).toMatchObject({ ok: true });
  });

  it('carries the resource sequences the planner had seen when given, and none otherwise (an older planner)', () => {
    const step = requestedExecution();
    const seen = { postgrespolicy: 12, postgrespolicyplan: 40 };
    const carried = toExecuteRequestMessage(step.request, { ...context, resourceSequences: seen });
    expect(carried.resourceSequences).toEqual(seen);
    expect(validatePayload(executeRequestContract, carried)).toMatchObject({ ok: true });
    expect('resourceSequences' in toExecuteRequestMessage(step.request, context)).toBe(false);
  });
});
