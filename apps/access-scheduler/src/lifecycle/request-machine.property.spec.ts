// Property test of the request state machine: random interleavings of the clock, executor reports,
// decisions, suspension and deletion, driven through the pure decision as the scheduler drives it. Whatever
// happens: the snapshot and a person's decisions are never rewritten, terminal phases stay, Active needs an
// applied activation, a revoke is never sent while its activation may still run, and access that was
// granted is revoked before the request ends (or lets go of its finalizer).
import type { EphemeralAccessRequest, PostgresPolicyPlan } from '@rolepolicy/kube';
import fc from 'fast-check';
import { decisionConditions } from './conditions.js';
import { decideRequest, TERMINAL_PHASES, type RequestPhase } from './request-machine.js';
import { resolveRequest } from './resolution.js';
import { FINGERPRINT, LIMITS, T0, accessPolicy, plan, request, target } from './test-support/fixtures.js';

type Event =
  | { kind: 'tick'; seconds: number }
  | { kind: 'report'; operation: 'Activate' | 'Revoke'; outcome: 'Applied' | 'Failed' }
  | { kind: 'approve'; correct: boolean }
  | { kind: 'deny' }
  | { kind: 'suspend'; on: boolean }
  | { kind: 'delete' };

const event: fc.Arbitrary<Event> = fc.oneof(
  fc.record({ kind: fc.constant('tick' as const), seconds: fc.integer({ min: 1, max: 400 }) }),
  fc.record({
    kind: fc.constant('report' as const),
    operation: fc.constantFrom('Activate' as const, 'Revoke' as const),
    outcome: fc.constantFrom('Applied' as const, 'Applied' as const, 'Failed' as const),
  }),
  fc.record({ kind: fc.constant('approve' as const), correct: fc.boolean() }),
  fc.record({ kind: fc.constant('deny' as const) }),
  fc.record({ kind: fc.constant('suspend' as const), on: fc.boolean() }),
  fc.record({ kind: fc.constant('delete' as const) }),
);

type PlanPhase = 'Applying' | 'Applied' | 'Failed';

interface World {
  req: EphemeralAccessRequest | null;
  now: number;
  suspended: boolean;
  plans: { Activate?: PlanPhase; Revoke?: PlanPhase };
  /** The executor ran this operation at least once (memberships touched). */
  granted: boolean;
}

function planFor(world: World, operation: 'Activate' | 'Revoke'): PostgresPolicyPlan | undefined {
  const phase = world.plans[operation];
  const req = world.req;
  if (phase === undefined || req?.status?.resolvedAccess == null) return undefined;
  return plan(req, operation, phase, phase === 'Failed' ? 'ExecutionFailed: boom' : undefined);
}

/** One scheduler pass, applying its writes to the world; checks the per-pass invariants. */
function pass(world: World, mode: 'Automatic' | 'Required'): void {
  const req = world.req;
  if (req === null) return;
  const policy = accessPolicy({ approval: { mode }, suspend: world.suspended, defaultDuration: '5m' });
  const resolution = resolveRequest({
    request: req,
    accessPolicy: policy,
    target: target(),
    limits: LIMITS,
    fingerprint: { ok: true, fingerprint: FINGERPRINT },
  });
  const before = req.status ?? {};
  const decision = decideRequest({
    request: req,
    resolution,
    target: target(),
    activationPlan: planFor(world, 'Activate'),
    revokePlan: planFor(world, 'Revoke'),
    now: world.now,
  });
  const beforePhase: RequestPhase = before.phase ?? 'Pending';
  let metadata = req.metadata;
  const after = decision.status ?? before;
  // A person's decisions and the snapshot are never rewritten; terminal phases stay.
  expect(decisionConditions(after.conditions)).toEqual(decisionConditions(before.conditions));
  if (before.resolvedAccess != null) expect(after.resolvedAccess).toEqual(before.resolvedAccess);
  if (TERMINAL_PHASES.includes(beforePhase)) expect(after.phase ?? 'Pending').toBe(beforePhase);
  for (const c of after.conditions ?? [])
    expect(['Approved', 'Denied', 'Resolved', 'Ready', 'Applied']).toContain(c.type);
  expect((after.conditions ?? []).length).toBeLessThanOrEqual(8);
  if (after.phase === 'Active') expect(world.plans.Activate).toBe('Applied');
  if (after.phase !== beforePhase && TERMINAL_PHASES.includes(after.phase ?? 'Pending') && world.granted) {
    expect(world.plans.Revoke).toBe('Applied');
  }
  for (const action of decision.actions) {
    if (action.kind === 'createPlan' || action.kind === 'sendScoped') {
      if (action.operation === 'Revoke') expect(world.plans.Activate).toBe('Applied');
      if (action.operation === 'Activate')
        expect(req.metadata.finalizers).toContain('rolepolicy.io/ephemeral-access');
    }
    if (action.kind === 'createPlan') world.plans[action.operation] = 'Applying';
    if (action.kind === 'addFinalizer')
      metadata = { ...metadata, finalizers: ['rolepolicy.io/ephemeral-access'] };
    if (action.kind === 'removeFinalizer') {
      // The finalizer goes only once granted access was revoked.
      if (world.granted && req.metadata.deletionTimestamp !== undefined)
        expect(world.plans.Revoke).toBe('Applied');
      world.req = null;
      return;
    }
  }
  world.req = { ...req, metadata, status: after };
}

function apply(world: World, e: Event, mode: 'Automatic' | 'Required'): void {
  const req = world.req;
  if (req === null) return;
  switch (e.kind) {
    case 'tick':
      world.now += e.seconds * 1000;
      return;
    case 'report': {
      if (world.plans[e.operation] !== 'Applying') return;
      world.plans[e.operation] = e.outcome;
      if (e.outcome === 'Applied') world.granted = e.operation === 'Activate' ? true : world.granted;
      return;
    }
    case 'approve':
    case 'deny': {
      const conditions = req.status?.conditions ?? [];
      if (conditions.some((c) => (c.type === 'Approved' || c.type === 'Denied') && c.status === 'True'))
        return;
      if (e.kind === 'approve' && (mode !== 'Required' || req.status?.resolvedAccess == null)) return;
      const resolved = req.status?.resolvedAccess;
      const decisionCondition =
        e.kind === 'deny'
          ? { type: 'Denied', status: 'True', reason: 'Denied' }
          : {
              type: 'Approved',
              status: 'True',
              reason: 'Approved',
              bundleHash: e.correct ? resolved!.bundleHash : 'sha256:wrong',
              grantedDuration: resolved!.grantedDuration,
            };
      world.req = {
        ...req,
        status: {
          ...req.status,
          conditions: [...conditions, decisionCondition],
          decidedBy: { username: 'bob' },
        },
      };
      return;
    }
    case 'suspend':
      world.suspended = e.on;
      return;
    case 'delete':
      world.req = {
        ...req,
        metadata: { ...req.metadata, deletionTimestamp: new Date(world.now).toISOString() },
      };
      return;
  }
}

describe('request state machine properties', () => {
  it('holds its invariants under any interleaving of clock, reports, decisions, suspension and deletion', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('Automatic' as const, 'Required' as const),
        fc.array(event, { minLength: 1, maxLength: 40 }),
        (mode, events) => {
          const world: World = {
            req: request(undefined, {}, { finalizers: [] }),
            now: T0,
            suspended: false,
            plans: {},
            granted: false,
          };
          for (const e of events) {
            apply(world, e, mode);
            pass(world, mode);
            pass(world, mode);
          }
          // Drain: time passes, the executor reports everything; granted access always ends revoked.
          for (let i = 0; i < 20 && world.req !== null; i++) {
            world.now += 10 * 60_000;
            for (const op of ['Activate', 'Revoke'] as const) {
              if (world.plans[op] === 'Applying') world.plans[op] = 'Applied';
              if (world.plans[op] === 'Failed' && op === 'Revoke') world.plans[op] = 'Applying';
            }
            if (world.plans.Activate === 'Applied') world.granted = true;
            pass(world, mode);
          }
          const phase = world.req?.status?.phase ?? 'Pending';
          if (world.req !== null) expect([...TERMINAL_PHASES, 'Pending', 'PendingApproval']).toContain(phase);
          if (world.granted) expect(world.plans.Revoke).toBe('Applied');
        },
      ),
      { numRuns: 200 },
    );
  });
});
