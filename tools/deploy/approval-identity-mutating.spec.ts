// deploy/admission/mutating/identities.yaml (docs/approvals.md): the MutatingAdmissionPolicy fills decidedBy
// and requestedBy from the caller, evaluated as the API server would; the validating policy then admits what
// it made, and still refuses what is not the caller's to decide.
import { denials, loadPolicies, mutations, type AdmissionRequest, type Caller } from './admission-eval.js';

const mutating = loadPolicies('deploy/admission/mutating/identities.yaml').get(
  'rolepolicy-decision-identities',
)!;
const validating = loadPolicies('deploy/admission/decisions.yaml').get('rolepolicy-decisions')!;

const params = {
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'rolepolicy-admission', namespace: 'rolepolicy-system' },
  data: { controllerServiceAccount: 'rolepolicy-k8s-gateway' },
};
const BOB: Caller = { username: 'bob@example.com', uid: 'u-bob', groups: ['dba', 'system:authenticated'] };
const GATEWAY: Caller = { username: 'system:serviceaccount:rolepolicy-system:rolepolicy-k8s-gateway' };

const pending = {
  metadata: { name: 'orders-1a2b3c', namespace: 'team-a' },
  status: {
    phase: 'Pending',
    conditions: [{ type: 'Approved', status: 'False', reason: 'PendingApproval' }],
  },
};
const typedByHand = {
  ...pending,
  status: {
    ...pending.status,
    conditions: [{ type: 'Approved', status: 'True', reason: 'ByReviewer' }],
    decidedBy: { username: 'whoever-i-say' },
  },
};
const statusWrite = (caller: Caller, object: unknown): AdmissionRequest => ({
  operation: 'UPDATE',
  group: 'rolepolicy.io',
  resource: 'postgrespolicyplans',
  subResource: 'status',
  namespace: 'team-a',
  name: 'orders-1a2b3c',
  caller,
  object,
  oldObject: pending,
  params,
  allowed: (check, who) => check.verb === 'approve' && who.username === BOB.username,
});

describe('mutating admission policy rolepolicy-decision-identities', () => {
  it('replaces the decidedBy a person typed with their authenticated identity; the validating policy admits it', () => {
    const patch = mutations(mutating, statusWrite(BOB, typedByHand));
    const caller = { username: BOB.username, uid: BOB.uid, groups: BOB.groups };
    expect(patch).toEqual([{ op: 'add', path: '/status/decidedBy', value: caller }]);
    const mutated = { ...typedByHand, status: { ...typedByHand.status, decidedBy: caller } };
    expect(denials(validating, statusWrite(BOB, mutated))).toEqual([]);
  });

  it('still leaves `approve` to the validating policy', () => {
    const alice: Caller = { username: 'alice@example.com', groups: [] };
    const [op] = mutations(mutating, statusWrite(alice, typedByHand));
    const mutated = { ...typedByHand, status: { ...typedByHand.status, decidedBy: op!['value'] } };
    expect(denials(validating, statusWrite(alice, mutated))).toEqual([
      expect.stringMatching(/needs the verb approve/),
    ]);
  });

  it('fills requestedBy of a new access request from its creator', () => {
    const request: AdmissionRequest = {
      ...statusWrite(BOB, { spec: { requestedBy: { username: 'someone-else' } } }),
      operation: 'CREATE',
      resource: 'ephemeralaccessrequests',
      subResource: '',
      oldObject: null,
    };
    expect(mutations(mutating, request)).toEqual([
      {
        op: 'add',
        path: '/spec/requestedBy',
        value: { username: BOB.username, uid: BOB.uid, groups: BOB.groups },
      },
    ]);
  });

  it('leaves the controller’s writes and writes without a new decision as they are', () => {
    expect(mutations(mutating, statusWrite(GATEWAY, typedByHand))).toEqual([]);
    expect(mutations(mutating, statusWrite(BOB, pending))).toEqual([]);
  });
});
