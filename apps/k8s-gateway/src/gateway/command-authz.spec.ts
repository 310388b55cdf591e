// The authorisation table of gateway commands (ADR 0022): each sender x each command kind x in and out of
// its scope, and the decision rule (nobody records a person's decision; the planner's auto-approval only
// for a policy with approval: auto).
import {
  K8S_COMMANDS,
  K8S_COMMAND_SENDERS,
  type K8sCommandSender,
  type K8sCommandV1,
} from '@rolepolicy/contracts';
import { scopedPlanName } from '@rolepolicy/policy';
import { REQUEST_FINALIZER } from '../../../access-scheduler/src/lifecycle/request-types.js';
import { TARGET_FINALIZER } from '../../../access-scheduler/src/lifecycle/target-guard.js';
import { AUTO_APPROVER } from '@rolepolicy/plan-lifecycle';
import {
  COMMAND_TABLE,
  SCHEDULER_FINALIZERS,
  commandRefusal,
  writeRefusal,
  type ObjectLookup,
} from './command-authz.js';

const CRD = 'rolepolicy.io/v1alpha1';
const NS = 'team-a';
const KINDS = [
  'PostgresPolicy',
  'PostgresPolicyPlan',
  'PostgresPolicyCandidate',
  'EphemeralAccessPolicy',
  'EphemeralAccessRequest',
  'ConfigMap',
  'Secret',
  'Event',
] as const;

const owner = (kind: string, uid = 'owner-uid') => ({
  apiVersion: CRD,
  kind,
  name: 'owner',
  uid,
  controller: true,
});
const target = (kind: string, name = 'x-sql') => ({
  apiVersion: kind === 'ConfigMap' ? 'v1' : CRD,
  kind,
  namespace: NS,
  name,
});

/** A command of `command` for `kind` shaped the way its legitimate sender builds it. */
function commandFor(
  command: (typeof K8S_COMMANDS)[number],
  kind: string,
  sender: K8sCommandSender,
): K8sCommandV1 {
  const base = { v: 1 as const, target: target(kind), idempotencyKey: 'k' };
  switch (command) {
    case 'patch-status':
      return {
        ...base,
        command,
        status: sender === 'executor' ? { phase: 'Applying' } : { lastError: null },
      };
    case 'apply-resource': {
      const plan =
        sender === 'access-scheduler'
          ? {
              metadata: { ownerReferences: [owner('EphemeralAccessRequest')] },
              spec: { scope: { kind: 'MembershipBundle' } },
            }
          : {
              metadata: {
                ownerReferences: [owner(kind === 'ConfigMap' ? 'PostgresPolicyPlan' : 'PostgresPolicy')],
              },
              spec: {},
            };
      return { ...base, command, object: plan };
    }
    case 'set-finalizer': {
      const finalizer = (SCHEDULER_FINALIZERS as Record<string, string>)[kind] ?? 'example.com/other';
      return { ...base, command, finalizer, present: true };
    }
    case 'record-event':
      return {
        ...base,
        // The only ConfigMap the scheduler tells about: an invalid notifications ConfigMap.
        ...(kind === 'ConfigMap' ? { target: target(kind, 'rolepolicy-notifications') } : {}),
        command,
        event: { type: 'Normal', reason: 'R', message: 'm', action: 'A', component: 'c' },
      };
    case 'delete-resource':
      return { ...base, command };
    default: {
      const never: never = command;
      return never;
    }
  }
}

describe('the authorisation table', () => {
  const cases = K8S_COMMAND_SENDERS.flatMap((sender) =>
    K8S_COMMANDS.flatMap((command) => KINDS.map((kind) => [sender, command, kind] as const)),
  );
  it.each(cases)('%s %s %s: allowed exactly when the table lists it', (sender, command, kind) => {
    const listed = (COMMAND_TABLE[sender][command] ?? []).includes(kind);
    const refusal = commandRefusal(sender, commandFor(command, kind, sender));
    expect(refusal === undefined).toBe(listed);
  });

  it('the access-scheduler records Events on the notifications ConfigMap only', () => {
    const event = commandFor('record-event', 'ConfigMap', 'access-scheduler');
    expect(commandRefusal('access-scheduler', event)).toBeUndefined();
    expect(
      commandRefusal('access-scheduler', { ...event, target: target('ConfigMap', 'kube-root-ca.crt') }),
    ).toBe('the access-scheduler records Events only on ConfigMaps named rolepolicy-notifications');
  });

  it('the inspector, the gateway and unknown senders send nothing', () => {
    expect(commandRefusal(undefined, commandFor('patch-status', 'PostgresPolicy', 'planner'))).toMatch(
      /no service/,
    );
  });

  it('the scheduler finalizers are the ones the access-scheduler sets', () => {
    expect(SCHEDULER_FINALIZERS.EphemeralAccessRequest).toBe(REQUEST_FINALIZER);
    expect(SCHEDULER_FINALIZERS.PostgresPolicy).toBe(TARGET_FINALIZER);
  });
});

describe('out of scope within an allowed kind', () => {
  it('a command outside the namespace the gateway serves is refused', () => {
    expect(
      commandRefusal('planner', commandFor('patch-status', 'PostgresPolicy', 'planner'), 'team-b'),
    ).toMatch(/namespace team-b/);
  });

  it('a wrong apiVersion is refused', () => {
    const command = {
      ...commandFor('patch-status', 'PostgresPolicy', 'planner'),
      target: { ...target('PostgresPolicy'), apiVersion: 'v1' },
    };
    expect(commandRefusal('planner', command)).toMatch(/written as rolepolicy.io/);
  });

  it('the executor writes only execution fields and phases', () => {
    const status = (s: Record<string, unknown>): K8sCommandV1 =>
      ({ ...commandFor('patch-status', 'PostgresPolicyPlan', 'executor'), status: s }) as K8sCommandV1;
    expect(
      commandRefusal('executor', status({ phase: 'Applied', appliedAt: 't', conditions: [] })),
    ).toBeUndefined();
    expect(commandRefusal('executor', status({ decidedBy: { username: 'x' } }))).toMatch(/decidedBy/);
    expect(commandRefusal('executor', status({ phase: 'Approved' }))).toMatch(/phase/);
  });

  it('the planner writes only ConfigMaps named <plan>-sql or -review, controlled by a rolepolicy object with uid', () => {
    const cm = (name: string, refs: unknown[]): K8sCommandV1 => ({
      v: 1,
      command: 'apply-resource',
      target: target('ConfigMap', name),
      object: { metadata: { ownerReferences: refs } },
      idempotencyKey: 'k',
    });
    expect(commandRefusal('planner', cm('p-review', [owner('PostgresPolicyPlan')]))).toBeUndefined();
    expect(commandRefusal('planner', cm('coredns', [owner('PostgresPolicyPlan')]))).toMatch(/-sql or/);
    expect(commandRefusal('planner', cm('p-sql', []))).toMatch(/controlled/);
    expect(commandRefusal('planner', cm('p-sql', [{ ...owner('PostgresPolicy'), uid: undefined }]))).toMatch(
      /controlled/,
    );
    expect(
      commandRefusal('planner', cm('p-sql', [{ ...owner('Deployment'), apiVersion: 'apps/v1' }])),
    ).toMatch(/controlled/);
  });

  it('plans: the planner creates durable plans, the access-scheduler scoped ones; neither the other kind', () => {
    const scoped = commandFor('apply-resource', 'PostgresPolicyPlan', 'access-scheduler');
    const durable = commandFor('apply-resource', 'PostgresPolicyPlan', 'planner');
    expect(commandRefusal('access-scheduler', scoped)).toBeUndefined();
    expect(commandRefusal('planner', durable)).toBeUndefined();
    expect(commandRefusal('planner', scoped)).toMatch(/durable or candidate/);
    expect(commandRefusal('access-scheduler', durable)).toMatch(/scoped plan/);
  });

  it('the access-scheduler sets only its own finalizers', () => {
    const other = {
      ...commandFor('set-finalizer', 'EphemeralAccessRequest', 'access-scheduler'),
      finalizer: 'example.com/keep',
    } as K8sCommandV1;
    expect(commandRefusal('access-scheduler', other)).toMatch(/finalizer example.com\/keep/);
  });
});

describe('writes judged on the object as it is', () => {
  const pending = {
    metadata: { ownerReferences: [owner('PostgresPolicy', 'pol-uid')] },
    spec: {},
    status: { phase: 'Pending', conditions: [{ type: 'Approved', status: 'False' }] },
  };
  const person = {
    conditions: [{ type: 'Approved', status: 'True', reason: 'ApprovedByUser' }],
    decidedBy: { username: 'mallory' },
    phase: 'Approved',
  };
  const auto = {
    conditions: [{ type: 'Approved', status: 'True', reason: 'AutoApproved' }],
    decidedBy: AUTO_APPROVER,
    phase: 'Approved',
  };
  const policy =
    (spec: Record<string, unknown>): ObjectLookup =>
    () => ({ metadata: { uid: 'pol-uid' }, spec });
  const patch = commandFor('patch-status', 'PostgresPolicyPlan', 'planner');

  it.each(K8S_COMMAND_SENDERS)("%s never records a person's decision", (sender) => {
    expect(
      writeRefusal(
        sender,
        patch,
        { current: pending, nextStatus: person },
        policy({ mode: 'apply', approval: 'auto' }),
      ),
    ).toMatch(/decision|scoped plan/);
  });

  it('the planner auto-approves only plans of an apply + auto policy, and names itself', () => {
    expect(
      writeRefusal(
        'planner',
        patch,
        { current: pending, nextStatus: auto },
        policy({ mode: 'apply', approval: 'auto' }),
      ),
    ).toBeUndefined();
    expect(
      writeRefusal(
        'planner',
        patch,
        { current: pending, nextStatus: auto },
        policy({ mode: 'apply', approval: 'manual' }),
      ),
    ).toMatch(/decision/);
    expect(
      writeRefusal(
        'planner',
        patch,
        { current: pending, nextStatus: auto },
        policy({ mode: 'plan', approval: 'auto' }),
      ),
    ).toMatch(/decision/);
    expect(
      writeRefusal(
        'executor',
        patch,
        { current: pending, nextStatus: auto },
        policy({ mode: 'apply', approval: 'auto' }),
      ),
    ).toMatch(/decision/);
  });

  it('a write that keeps a recorded decision goes ahead (the executor resends the conditions it read)', () => {
    const decided = { ...pending, status: person };
    expect(
      writeRefusal(
        'executor',
        patch,
        { current: decided, nextStatus: { ...person, phase: 'Applied' } },
        policy({}),
      ),
    ).toBeUndefined();
  });

  it('nobody removes or replaces a recorded decision', () => {
    const decided = { ...pending, status: person };
    expect(
      writeRefusal(
        'planner',
        patch,
        { current: decided, nextStatus: { phase: 'Pending', conditions: [] } },
        policy({}),
      ),
    ).toMatch(/decision/);
  });

  it('the access-scheduler never writes a decision on a request', () => {
    const request = commandFor('patch-status', 'EphemeralAccessRequest', 'access-scheduler');
    expect(
      writeRefusal('access-scheduler', request, { current: { status: {} }, nextStatus: person }, policy({})),
    ).toMatch(/decision/);
  });

  it('a sender writes only plans it owns, and ConfigMaps controlled by rolepolicy', () => {
    const scopedPlan = {
      metadata: { ownerReferences: [owner('EphemeralAccessRequest')] },
      spec: { scope: { kind: 'MembershipBundle' } },
    };
    expect(
      writeRefusal(
        'planner',
        commandFor('delete-resource', 'PostgresPolicyPlan', 'planner'),
        { current: scopedPlan },
        policy({}),
      ),
    ).toMatch(/durable or candidate/);
    expect(writeRefusal('access-scheduler', patch, { current: pending }, policy({}))).toMatch(/scoped plan/);
    const cmDelete = commandFor('delete-resource', 'ConfigMap', 'planner');
    expect(writeRefusal('planner', cmDelete, { current: { metadata: {} } }, policy({}))).toMatch(
      /not controlled/,
    );
    expect(
      writeRefusal(
        'planner',
        cmDelete,
        { current: { metadata: { ownerReferences: [owner('PostgresPolicyPlan')] } } },
        policy({}),
      ),
    ).toBeUndefined();
  });
});

describe('plans squatting a scoped plan name (ADR 0020)', () => {
  const hash = `sha256:${'ab'.repeat(32)}`;
  const request = {
    metadata: { name: 'alice-ro', uid: '6f1c2d3e-0000' },
    status: { resolvedAccess: { bundleHash: hash } },
  };
  const lookup: ObjectLookup = (kind, namespace, name) =>
    kind === 'EphemeralAccessRequest' && namespace === NS && name === 'alice-ro' ? request : undefined;
  const squatter = (name: string) => ({
    metadata: { name, ownerReferences: [owner('PostgresPolicy', 'pol-uid')] },
    spec: {},
  });
  const del = (name: string) => ({
    ...commandFor('delete-resource', 'PostgresPolicyPlan', 'access-scheduler'),
    target: target('PostgresPolicyPlan', name),
  });

  it('the access-scheduler may delete a plan holding one of an existing request scoped plan names', () => {
    const name = scopedPlanName({ name: 'alice-ro', uid: '6f1c2d3e-0000' }, 'Revoke', hash);
    expect(writeRefusal('access-scheduler', del(name), { current: squatter(name) }, lookup)).toBeUndefined();
  });

  it.each([
    ['a durable plan of another name', 'alice-ro-plan-1'],
    [
      'the name of another bundle',
      scopedPlanName({ name: 'alice-ro', uid: '6f1c2d3e' }, 'Revoke', `sha256:${'cd'.repeat(32)}`),
    ],
    [
      'the name of another request uid',
      scopedPlanName({ name: 'alice-ro', uid: '99999999' }, 'Activate', hash),
    ],
    [
      'the name of a request that does not exist',
      scopedPlanName({ name: 'bob', uid: '6f1c2d3e' }, 'Activate', hash),
    ],
  ])('but not %s', (_label, name) => {
    expect(writeRefusal('access-scheduler', del(name), { current: squatter(name) }, lookup)).toMatch(
      /scoped plan/,
    );
  });

  it('nor may the executor or the planner send that delete (the planner deletes only its own plans)', () => {
    const name = scopedPlanName({ name: 'alice-ro', uid: '6f1c2d3e-0000' }, 'Activate', hash);
    expect(commandRefusal('executor', del(name))).toMatch(/may not send delete-resource/);
    expect(writeRefusal('planner', del(name), { current: squatter(name) }, lookup)).toBeUndefined();
    const scoped = {
      metadata: { name, ownerReferences: [owner('EphemeralAccessRequest')] },
      spec: { scope: {} },
    };
    expect(writeRefusal('planner', del(name), { current: scoped }, lookup)).toMatch(/durable or candidate/);
  });
});
