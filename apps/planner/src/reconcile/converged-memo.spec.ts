// The planner's memory of a converged policy: when the fingerprint path may stand for a full pass.
import type { ComputedPlan, PlanningOutcome } from '@rolepolicy/plan-lifecycle';
import { ConvergedMemo, planningInputsDigest } from './converged-memo.js';
import type { PlanningInput } from '../planning/planning.js';

const FP = `sha256:${'a'.repeat(64)}`;
const OTHER_FP = `sha256:${'b'.repeat(64)}`;

function outcome(changeCount: number): PlanningOutcome {
  return {
    kind: 'computed',
    plan: { changeCount, changeDigest: 'sha256:x', snapshotRequestedAt: 'then' } as unknown as ComputedPlan,
  };
}

const inputs = (
  overrides: Partial<PlanningInput> = {},
): Omit<PlanningInput, 'snapshot' | 'snapshotRequestedAt'> =>
  ({
    namespace: 'team-a',
    spec: { mode: 'apply', schemas: [{ name: 'app', profiles: ['reader'] }] },
    desired: { memberships: [] },
    scope: { roles: ['app-reader'] },
    target: 'team-a/orders-db',
    connection: { url: 'postgres://db/app' },
    passwordSources: {},
    appliedPasswordSourceVersions: {},
    allowSchemaOwnerTransfers: false,
    ...overrides,
  }) as unknown as Omit<PlanningInput, 'snapshot' | 'snapshotRequestedAt'>;

describe('converged memo', () => {
  const settings = { fullEveryPasses: 3, fullAfterMs: 60_000 };

  it('a full pass that found nothing to change is confirmed by its fingerprint, with this pass request time', () => {
    const memo = new ConvergedMemo(settings);
    const digest = planningInputsDigest('uid-1', inputs());
    memo.record('ns/p', digest, FP, 'sha256:logical', outcome(0), 0);
    expect(memo.usable('ns/p', 1000)).toEqual({ fingerprint: FP, logicalFingerprint: 'sha256:logical' });
    expect(memo.matches('ns/p', digest)).toBe(true);
    const reused = memo.confirm('ns/p', digest, FP, 'now');
    expect(reused).toEqual({
      kind: 'computed',
      plan: expect.objectContaining({ snapshotRequestedAt: 'now' }),
    });
  });

  it('a pass with changes, a failure or no fingerprint records nothing (the next pass is full)', () => {
    const memo = new ConvergedMemo(settings);
    const digest = planningInputsDigest('uid-1', inputs());
    memo.record('ns/p', digest, FP, null, outcome(0), 0);
    memo.record('ns/p', digest, FP, null, outcome(2), 0);
    expect(memo.usable('ns/p', 1)).toBeNull();
    memo.record('ns/p', digest, undefined, null, outcome(0), 0);
    expect(memo.usable('ns/p', 1)).toBeNull();
    memo.record(
      'ns/p',
      digest,
      FP,
      null,
      { kind: 'failed', error: { class: 'transient', reason: 'X', message: 'm' } },
      0,
    );
    expect(memo.usable('ns/p', 1)).toBeNull();
  });

  it('any changed planning input (spec, overlay, applied password versions, connection, uid) needs a full pass', () => {
    const memo = new ConvergedMemo(settings);
    const digest = planningInputsDigest('uid-1', inputs());
    memo.record('ns/p', digest, FP, null, outcome(0), 0);
    const changed = [
      planningInputsDigest('uid-1', inputs({ spec: { mode: 'observe' } })),
      planningInputsDigest(
        'uid-1',
        inputs({
          desired: { memberships: [{ role: 'r', member: 'm' }] } as unknown as PlanningInput['desired'],
        }),
      ),
      planningInputsDigest('uid-1', inputs({ appliedPasswordSourceVersions: { app: 's:k:7' } })),
      planningInputsDigest('uid-1', inputs({ passwordSources: { app: 's:k:8' } })),
      planningInputsDigest('uid-1', inputs({ connection: { url: 'postgres://other/app' } } as never)),
      planningInputsDigest('uid-2', inputs()),
    ];
    for (const other of changed) {
      expect(other).not.toBe(digest);
      expect(memo.matches('ns/p', other)).toBe(false);
      expect(memo.confirm('ns/p', other, FP, 'now')).toBeNull();
    }
    expect(memo.confirm('ns/p', digest, OTHER_FP, 'now')).toBeNull();
  });

  it('the digest does not depend on key order', () => {
    const a = inputs();
    const b = Object.fromEntries(Object.entries(a).reverse()) as typeof a;
    expect(planningInputsDigest('u', b)).toBe(planningInputsDigest('u', a));
  });

  it('belt and braces: every Nth pass in a row and an old full pass read in full again', () => {
    const memo = new ConvergedMemo(settings);
    const digest = planningInputsDigest('uid-1', inputs());
    memo.record('ns/p', digest, FP, null, outcome(0), 0);
    expect(memo.confirm('ns/p', digest, FP, 't1')).not.toBeNull();
    expect(memo.usable('ns/p', 10)).not.toBeNull();
    expect(memo.confirm('ns/p', digest, FP, 't2')).not.toBeNull();
    expect(memo.usable('ns/p', 10)).toBeNull(); // the third pass is full
    memo.record('ns/p', digest, FP, null, outcome(0), 100);
    expect(memo.usable('ns/p', 100 + 59_999)).not.toBeNull();
    expect(memo.usable('ns/p', 100 + 60_000)).toBeNull();
    memo.forget('ns/p');
    expect(memo.usable('ns/p', 101)).toBeNull();
  });

  it('a new term keeps the entries of policies still there and drops the others', () => {
    const memo = new ConvergedMemo(settings);
    const digest = planningInputsDigest('uid-1', inputs());
    memo.record('ns/kept', digest, FP, null, outcome(0), 0);
    memo.record('ns/deleted', digest, FP, null, outcome(0), 0);
    memo.retain((key) => key === 'ns/kept');
    expect(memo.size).toBe(1);
    expect(memo.confirm('ns/kept', digest, FP, 'now')).not.toBeNull();
    expect(memo.usable('ns/deleted', 1)).toBeNull();
  });
});
