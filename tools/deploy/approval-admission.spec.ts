// deploy/admission/decisions.yaml (ADR 0026, docs/approvals.md): the ValidatingAdmissionPolicy
// rolepolicy-decisions, evaluated as the API server would, rule by rule: a decision carries the caller's own
// identity, needs `approve`, is not the requester's own (unless the namespace opted out), changes nothing
// but the decision; a request is created in its creator's name; the controller's writes pass, identified by
// the exact username built from the parameter ConfigMap's namespace.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import {
  denials,
  loadPolicies,
  type AdmissionRequest,
  type AuthzCheck,
  type Caller,
} from './admission-eval.js';
import { REPO_ROOT } from './render.js';

const policy = loadPolicies('deploy/admission/decisions.yaml').get('rolepolicy-decisions')!;

const params = (namespace = 'rolepolicy-system', extra: Record<string, string> = {}) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'rolepolicy-admission', namespace },
  data: { controllerServiceAccount: 'rolepolicy-k8s-gateway', ...extra },
});

const GATEWAY: Caller = {
  username: 'system:serviceaccount:rolepolicy-system:rolepolicy-k8s-gateway',
  uid: 'sa-uid',
  groups: ['system:serviceaccounts', 'system:serviceaccounts:rolepolicy-system', 'system:authenticated'],
};
const BOB: Caller = { username: 'bob@example.com', uid: 'u-bob', groups: ['dba', 'system:authenticated'] };
const ALICE: Caller = {
  username: 'alice@example.com',
  uid: 'u-alice',
  groups: ['dev', 'system:authenticated'],
};
const identity = (c: Caller) => ({ username: c.username, uid: c.uid, groups: c.groups });

/** RBAC: `approve` is held by the callers named. */
const approvers =
  (...names: string[]) =>
  (check: AuthzCheck, caller: Caller) =>
    check.verb === 'approve' && names.includes(caller.username);

const pendingPlan = {
  apiVersion: 'rolepolicy.io/v1alpha1',
  kind: 'PostgresPolicyPlan',
  metadata: { name: 'orders-1a2b3c', namespace: 'team-a' },
  spec: { policyRef: { name: 'orders' } },
  status: {
    phase: 'Pending',
    changeDigest: 'sha256:abc',
    sqlInline: 'GRANT ...',
    conditions: [
      { type: 'Computed', status: 'True', reason: 'PlanComputed' },
      { type: 'Approved', status: 'False', reason: 'PendingApproval' },
    ],
  },
};

/** The plan as a person approves it: the pending Approved condition replaced, decidedBy added. */
function decided(plan: typeof pendingPlan, by: unknown, type = 'Approved', extra: object = {}) {
  const conditions = plan.status.conditions.filter((c) => c.type !== 'Approved');
  return {
    ...plan,
    status: {
      ...plan.status,
      ...extra,
      conditions: [...conditions, { type, status: 'True', reason: 'ByReviewer', message: 'OPS-1' }],
      decidedBy: by,
    },
  };
}

const pendingRequest = {
  apiVersion: 'rolepolicy.io/v1alpha1',
  kind: 'EphemeralAccessRequest',
  metadata: { name: 'alice-read', namespace: 'team-a' },
  spec: { accessPolicyRef: { name: 'read' }, subject: { role: 'alice' }, requestedBy: identity(ALICE) },
  status: {
    phase: 'PendingApproval',
    approvalExpiresAt: '2026-11-27T19:00:00Z',
    resolvedAccess: { bundleHash: 'sha256:b', grantedDuration: '3600s' },
    conditions: [
      { type: 'Resolved', status: 'True', reason: 'AccessPolicyResolved' },
      { type: 'Ready', status: 'True', reason: 'PendingApproval' },
    ],
  },
};

function decidedRequest(by: unknown, type = 'Approved', extra: object = {}) {
  return {
    ...pendingRequest,
    status: {
      ...pendingRequest.status,
      ...extra,
      conditions: [
        ...pendingRequest.status.conditions,
        { type, status: 'True', reason: type, bundleHash: 'sha256:b', grantedDuration: '3600s' },
      ],
      decidedBy: by,
    },
  };
}

type Write = Partial<AdmissionRequest> & { caller: Caller; object: unknown };
const planStatus = (w: Write): AdmissionRequest => ({
  operation: 'UPDATE',
  group: 'rolepolicy.io',
  resource: 'postgrespolicyplans',
  subResource: 'status',
  namespace: 'team-a',
  name: 'orders-1a2b3c',
  oldObject: pendingPlan,
  params: params(),
  allowed: approvers(BOB.username),
  ...w,
});
const requestStatus = (w: Write): AdmissionRequest => ({
  ...planStatus({ oldObject: pendingRequest, ...w }),
  resource: 'ephemeralaccessrequests',
  name: 'alice-read',
});
const requestCreate = (w: Write): AdmissionRequest => ({
  operation: 'CREATE',
  group: 'rolepolicy.io',
  resource: 'ephemeralaccessrequests',
  namespace: 'team-a',
  name: 'alice-read',
  oldObject: null,
  params: params(),
  ...w,
});

describe('admission policy rolepolicy-decisions: the decision is the caller’s own', () => {
  it('admits an approver’s decision recorded under their own username, uid and groups', () => {
    for (const type of ['Approved', 'Denied']) {
      const object = decided(pendingPlan, identity(BOB), type);
      expect(denials(policy, planStatus({ caller: BOB, object }))).toEqual([]);
    }
    // The groups are a set: their order does not matter.
    const reordered = decided(pendingPlan, { ...identity(BOB), groups: [...BOB.groups!].reverse() });
    expect(denials(policy, planStatus({ caller: BOB, object: reordered }))).toEqual([]);
  });

  it('refuses a forged decidedBy: another username, a missing uid, a group too many or too few', () => {
    const forged = [
      { ...identity(BOB), username: 'carol@example.com' },
      { username: BOB.username, groups: BOB.groups },
      { ...identity(BOB), groups: [...BOB.groups!, 'system:masters'] },
      { ...identity(BOB), groups: ['dba'] },
    ];
    for (const by of forged) {
      expect(denials(policy, planStatus({ caller: BOB, object: decided(pendingPlan, by) }))).toEqual([
        'decidedBy must be the authenticated caller: username bob@example.com, uid u-bob and the groups of the request',
      ]);
    }
    const onRequest = decidedRequest({ ...identity(BOB), username: 'carol@example.com' });
    expect(denials(policy, requestStatus({ caller: BOB, object: onRequest }))).toHaveLength(1);
  });
});

describe('admission policy rolepolicy-decisions: deciding is a permission (`approve`)', () => {
  it('asks the authorizer for `approve` on that very plan or request, and refuses without it', () => {
    const asked: AuthzCheck[] = [];
    const object = decided(pendingPlan, identity(ALICE));
    const refused = denials(
      policy,
      planStatus({ caller: ALICE, object, allowed: (c) => (asked.push(c), false) }),
    );
    expect(refused).toEqual([
      'recording a decision needs the verb approve on postgrespolicyplans orders-1a2b3c in namespace team-a',
    ]);
    expect(asked).toEqual([
      {
        group: 'rolepolicy.io',
        resource: 'postgrespolicyplans',
        namespace: 'team-a',
        name: 'orders-1a2b3c',
        verb: 'approve',
      },
    ]);
    const request = decidedRequest(identity(BOB));
    expect(denials(policy, requestStatus({ caller: BOB, object: request, allowed: () => false }))).toEqual([
      'recording a decision needs the verb approve on ephemeralaccessrequests alice-read in namespace team-a',
    ]);
  });

  it('does not ask when no decision is recorded (a status write that changes nothing)', () => {
    const asked: AuthzCheck[] = [];
    const write = planStatus({ caller: ALICE, object: pendingPlan, allowed: (c) => (asked.push(c), false) });
    expect(denials(policy, write)).toEqual([]);
    expect(asked).toEqual([]);
  });
});

describe('admission policy rolepolicy-decisions: separation of duties', () => {
  const allowAll = () => true;

  it('refuses the requester deciding their own request, Approved or Denied', () => {
    for (const type of ['Approved', 'Denied']) {
      const object = decidedRequest(identity(ALICE), type);
      expect(denials(policy, requestStatus({ caller: ALICE, object, allowed: allowAll }))).toEqual([
        'an access request cannot be decided by its requester (separation of duties)',
      ]);
    }
    const byBob = decidedRequest(identity(BOB));
    expect(denials(policy, requestStatus({ caller: BOB, object: byBob, allowed: allowAll }))).toEqual([]);
  });

  it('is turned off only in the namespaces the parameter ConfigMap names', () => {
    const object = decidedRequest(identity(ALICE));
    const off = params('rolepolicy-system', { 'separationOfDuties.team-a': 'off' });
    expect(denials(policy, requestStatus({ caller: ALICE, object, allowed: allowAll, params: off }))).toEqual(
      [],
    );
    const elsewhere = params('rolepolicy-system', { 'separationOfDuties.team-b': 'off' });
    expect(
      denials(policy, requestStatus({ caller: ALICE, object, allowed: allowAll, params: elsewhere })),
    ).toHaveLength(1);
    const notOff = params('rolepolicy-system', { 'separationOfDuties.team-a': 'on' });
    expect(
      denials(policy, requestStatus({ caller: ALICE, object, allowed: allowAll, params: notOff })),
    ).toHaveLength(1);
  });
});

describe('admission policy rolepolicy-decisions: a person changes only the decision', () => {
  it('refuses a decision that also moves the phase or another plan field', () => {
    for (const extra of [{ phase: 'Approved' }, { sqlInline: 'DROP ROLE x' }, { changeDigest: 'sha256:x' }]) {
      const object = decided(pendingPlan, identity(BOB), 'Approved', extra);
      expect(denials(policy, planStatus({ caller: BOB, object }))).toEqual([
        expect.stringMatching(/every other field of a plan's status belongs to the controller/),
      ]);
    }
  });

  it('refuses a status write that changes, adds or drops a condition other than Approved and Denied', () => {
    const computedFalse = {
      ...pendingPlan,
      status: {
        ...pendingPlan.status,
        conditions: [{ type: 'Computed', status: 'False' }, pendingPlan.status.conditions[1]!],
      },
    };
    const dropped = { ...pendingPlan, status: { ...pendingPlan.status, conditions: [] } };
    for (const object of [computedFalse, dropped]) {
      expect(denials(policy, planStatus({ caller: BOB, object }))).toEqual([
        expect.stringMatching(/the other conditions belong to the controller/),
      ]);
    }
  });

  it('refuses a request decision that moves its clock, its snapshot or its phase', () => {
    for (const extra of [
      { expiresAt: '2030-01-01T00:00:00Z' },
      { phase: 'Active' },
      { resolvedAccess: { bundleHash: 'sha256:other', grantedDuration: '999999s' } },
    ]) {
      const object = decidedRequest(identity(BOB), 'Approved', extra);
      expect(denials(policy, requestStatus({ caller: BOB, object, allowed: () => true }))).toEqual([
        expect.stringMatching(/every other field of an access request's status belongs to the controller/),
      ]);
    }
  });

  it('lets a field the controller never set stay unset, and refuses setting one', () => {
    const object = decided(pendingPlan, identity(BOB), 'Approved', { lastError: 'x' });
    expect(denials(policy, planStatus({ caller: BOB, object }))).toHaveLength(1);
  });

  it('names every status field of the CRDs but conditions and decidedBy', () => {
    for (const [crd, kind] of [
      ['postgrespolicyplans', "a plan's status"],
      ['ephemeralaccessrequests', "an access request's status"],
    ] as const) {
      const doc = parse(
        readFileSync(path.join(REPO_ROOT, `deploy/crds/${crd}.rolepolicy.io.yaml`), 'utf8'),
      ) as {
        spec: {
          versions: { schema: { openAPIV3Schema: { properties: { status: { properties: object } } } } }[];
        };
      };
      const fields = Object.keys(doc.spec.versions[0]!.schema.openAPIV3Schema.properties.status.properties);
      const rule = policy.spec.validations!.find((v) => v.message?.includes(kind))!;
      const named = [...rule.expression.matchAll(/has\(variables\.st\.(\w+)\)/g)].map((m) => m[1]);
      expect(new Set(named)).toEqual(new Set(fields.filter((f) => f !== 'conditions' && f !== 'decidedBy')));
    }
  });
});

describe('admission policy rolepolicy-decisions: requests are created in their creator’s name', () => {
  it('admits requestedBy equal to the creator and refuses any other, the controller’s too', () => {
    expect(denials(policy, requestCreate({ caller: ALICE, object: pendingRequest }))).toEqual([]);
    const forged = { ...pendingRequest, spec: { ...pendingRequest.spec, requestedBy: identity(BOB) } };
    const message =
      'spec.requestedBy must be the authenticated caller: username alice@example.com, uid u-alice and the groups of the request';
    expect(denials(policy, requestCreate({ caller: ALICE, object: forged }))).toEqual([message]);
    expect(denials(policy, requestCreate({ caller: GATEWAY, object: pendingRequest }))).toHaveLength(1);
  });
});

describe('admission policy rolepolicy-decisions: the controller', () => {
  const autoApproved = decided(
    pendingPlan,
    { username: 'system:rolepolicy-planner(auto-approval)', groups: [] },
    'Approved',
    { phase: 'Approved' },
  );

  it('admits every status write of the k8s-gateway’s ServiceAccount, by exact username', () => {
    expect(
      denials(policy, planStatus({ caller: GATEWAY, object: autoApproved, allowed: () => false })),
    ).toEqual([]);
    const applying = { ...pendingRequest, status: { ...pendingRequest.status, phase: 'Applying' } };
    expect(denials(policy, requestStatus({ caller: GATEWAY, object: applying }))).toEqual([]);
  });

  it('follows the install namespace: the parameter ConfigMap’s own namespace is part of the username', () => {
    const elsewhere = { ...GATEWAY, username: 'system:serviceaccount:db-ops:rolepolicy-k8s-gateway' };
    expect(
      denials(policy, planStatus({ caller: elsewhere, object: autoApproved, params: params('db-ops') })),
    ).toEqual([]);
    // The same ServiceAccount name in a tenant namespace is a person like any other.
    const impostor = { ...GATEWAY, username: 'system:serviceaccount:team-a:rolepolicy-k8s-gateway' };
    expect(denials(policy, planStatus({ caller: impostor, object: autoApproved })).length).toBeGreaterThan(0);
  });

  it('fails closed when the parameters are missing a key (an expression error refuses)', () => {
    const broken = { ...params(), data: {} };
    expect(
      denials(policy, planStatus({ caller: GATEWAY, object: autoApproved, params: broken })).length,
    ).toBeGreaterThan(0);
  });
});
