import fc from 'fast-check';
import type { Change } from '../model/change.js';
import type { MembershipEdge } from '../model/state.js';
import type { AnchoredRequest, HeldMembership } from './held-access.js';
import {
  escapeCheck,
  scopedChanges,
  type ScopedChangesInput,
  type ScopedLiveState,
  type ScopedOperation,
} from './scoped-changes.js';

const PG16 = 160004;
const PG15 = 150010;
const allRoles = ['alice', 'bob', 'reader', 'writer', 'ops'];

const m = (role: string, member = 'alice', inherit = true): HeldMembership => ({ role, member, inherit });
const row = (role: string, member = 'alice', extra: Partial<MembershipEdge> = {}): MembershipEdge => ({
  role,
  member,
  inherit: true,
  admin: false,
  grantor: 'rolepolicy',
  ...extra,
});
const live = (
  memberships: MembershipEdge[] = [],
  serverVersionNum = PG16,
  inherit = true,
): ScopedLiveState => ({
  memberships,
  roles: allRoles.map((name) => ({ name, inherit })),
  serverVersionNum,
});
const holder = (name: string, memberships: HeldMembership[]): AnchoredRequest => ({
  name,
  uid: `${name}-uid`,
  targetDatabaseFingerprint: 'sha256:fp',
  memberships,
});

function run(
  operation: ScopedOperation,
  memberships: HeldMembership[],
  over: Partial<Omit<ScopedChangesInput, 'operation' | 'memberships' | 'request'>> = {},
) {
  return scopedChanges({
    operation,
    request: { name: 'req', uid: 'req-uid' },
    memberships,
    live: over.live ?? live(),
    durable: over.durable ?? [],
    otherHolders: over.otherHolders ?? [],
  });
}

describe('scopedChanges: Activate', () => {
  it('grants each membership that is not live, admin false, with the bundle inherit', () => {
    const result = run('Activate', [m('writer', 'alice', false), m('reader')]);
    expect(result.refusals).toEqual([]);
    expect(result.changes).toEqual([
      { kind: 'add_member', role: 'reader', member: 'alice', inherit: true, admin: false },
      { kind: 'add_member', role: 'writer', member: 'alice', inherit: false, admin: false },
    ]);
  });

  it('a live edge with the same options is accepted without a statement (a retry, or another holder)', () => {
    const result = run('Activate', [m('reader')], { live: live([row('reader')]) });
    expect(result.changes).toEqual([]);
    expect(result.unchanged).toEqual([m('reader')]);
    expect(result.refusals).toEqual([]);
  });

  it('refuses RoleMissing when the granted role or the subject does not exist', () => {
    const result = run('Activate', [m('ghost'), m('reader', 'nobody')]);
    expect(result.refusals.map((r) => r.reason)).toEqual(['RoleMissing', 'RoleMissing']);
    expect(result.refusals[0]!.message).toContain('role ghost does not exist');
    expect(result.refusals[1]!.message).toContain('role nobody does not exist');
  });

  it('refuses AlreadyDurable when the base policy declares the edge', () => {
    const result = run('Activate', [m('reader')], {
      durable: [{ role: 'reader', member: 'alice', inherit: true, admin: false }],
    });
    expect(result.refusals.map((r) => r.reason)).toEqual(['AlreadyDurable']);
  });

  it('refuses UnexpectedLiveEdge when the live edge has admin or another inherit (16+)', () => {
    expect(
      run('Activate', [m('reader')], { live: live([row('reader', 'alice', { admin: true })]) }).refusals[0]
        ?.reason,
    ).toBe('UnexpectedLiveEdge');
    const other = run('Activate', [m('reader')], {
      live: live([row('reader', 'alice', { inherit: false, grantor: 'dba' })]),
    });
    expect(other.refusals[0]?.reason).toBe('UnexpectedLiveEdge');
    expect(other.refusals[0]?.message).toContain('granted by dba');
  });

  it('refuses ConflictingInherit when another holder holds the edge with another inherit', () => {
    const result = run('Activate', [m('reader', 'alice', false)], {
      otherHolders: [holder('other', [m('reader', 'alice', true)])],
    });
    expect(result.refusals[0]?.reason).toBe('ConflictingInherit');
    expect(result.refusals[0]?.message).toContain('request other (uid other-uid)');
  });

  it('before PostgreSQL 16 requires inherit to equal the subject rolinherit', () => {
    const refused = run('Activate', [m('reader', 'alice', false)], { live: live([], PG15, true) });
    expect(refused.refusals.map((r) => r.reason)).toEqual(['InheritUnsupported']);
    const ok = run('Activate', [m('reader', 'alice', false)], { live: live([], PG15, false) });
    expect(ok.refusals).toEqual([]);
    expect(ok.changes).toHaveLength(1);
    // The live inherit on 15 is the member's attribute: it is not compared per edge.
    const liveOn15 = run('Activate', [m('reader')], {
      live: live([row('reader', 'alice', { inherit: true })], PG15, true),
    });
    expect(liveOn15.unchanged).toEqual([m('reader')]);
  });
});

describe('scopedChanges: Revoke', () => {
  it('removes every live row of the bundle, per grantor', () => {
    const result = run('Revoke', [m('reader'), m('writer')], {
      live: live([
        row('reader', 'alice', { grantor: 'rolepolicy' }),
        row('reader', 'alice', { grantor: null }),
        row('writer'),
      ]),
    });
    expect(result.changes).toEqual([
      { kind: 'remove_member', role: 'reader', member: 'alice', grantor: null },
      { kind: 'remove_member', role: 'reader', member: 'alice', grantor: 'rolepolicy' },
      { kind: 'remove_member', role: 'writer', member: 'alice', grantor: 'rolepolicy' },
    ]);
  });

  it('keeps an edge the base policy declares and records it as retained', () => {
    const result = run('Revoke', [m('reader'), m('writer')], {
      live: live([row('reader'), row('writer')]),
      durable: [{ role: 'reader', member: 'alice', inherit: true, admin: false }],
    });
    expect(result.retained).toEqual([m('reader')]);
    expect(result.changes.map((c) => c.role)).toEqual(['writer']);
  });

  it('keeps an edge another anchored request holds, without recording it as retained', () => {
    const result = run('Revoke', [m('reader')], {
      live: live([row('reader')]),
      otherHolders: [holder('other', [m('reader')])],
    });
    expect(result.changes).toEqual([]);
    expect(result.retained).toEqual([]);
    expect(result.shared).toEqual([
      { membership: m('reader'), holders: [{ name: 'other', uid: 'other-uid' }] },
    ]);
  });

  it('ignores this request among the other holders', () => {
    const result = run('Revoke', [m('reader')], {
      live: live([row('reader')]),
      otherHolders: [{ ...holder('req', [m('reader')]), uid: 'req-uid' }],
    });
    expect(result.changes).toHaveLength(1);
  });

  it('an edge that is gone (or a role that is gone) needs nothing and is never a refusal', () => {
    const result = run('Revoke', [m('reader'), m('ghost')]);
    expect(result.changes).toEqual([]);
    expect(result.refusals).toEqual([]);
    expect(result.unchanged).toEqual([m('ghost'), m('reader')]);
  });
});

describe('escapeCheck', () => {
  const bundle = [m('reader'), m('writer', 'alice', false)];
  it('passes adds and removes of the bundle', () => {
    expect(
      escapeCheck(
        'Activate',
        [{ kind: 'add_member', role: 'writer', member: 'alice', inherit: false, admin: false }],
        bundle,
        'alice',
      ),
    ).toEqual({
      ok: true,
    });
    expect(
      escapeCheck(
        'Revoke',
        [{ kind: 'remove_member', role: 'reader', member: 'alice', grantor: 'x' }],
        bundle,
        'alice',
      ),
    ).toEqual({ ok: true });
  });

  it('refuses a bundle that grants to anyone but the subject, even with no change', () => {
    const result = escapeCheck('Revoke', [], [...bundle, m('reader', 'bob')], 'alice');
    expect(result).toEqual({
      ok: false,
      message: "the bundle grants role reader to bob, not to the request's subject alice",
    });
  });

  it.each<[string, ScopedOperation, Change, RegExp]>([
    [
      'another member',
      'Activate',
      { kind: 'add_member', role: 'reader', member: 'bob', inherit: true, admin: false },
      /not in the resolved bundle/,
    ],
    [
      'another role',
      'Revoke',
      { kind: 'remove_member', role: 'ops', member: 'alice', grantor: null },
      /not in the resolved bundle/,
    ],
    [
      'admin',
      'Activate',
      { kind: 'add_member', role: 'reader', member: 'alice', inherit: true, admin: true },
      /without admin/,
    ],
    [
      'another inherit',
      'Activate',
      { kind: 'add_member', role: 'writer', member: 'alice', inherit: true, admin: false },
      /inherit false/,
    ],
    [
      'a remove in an Activate',
      'Activate',
      { kind: 'remove_member', role: 'reader', member: 'alice', grantor: null },
      /only contain add_member/,
    ],
    [
      'an add in a Revoke',
      'Revoke',
      { kind: 'add_member', role: 'reader', member: 'alice', inherit: true, admin: false },
      /only contain remove_member/,
    ],
    ['any other change', 'Activate', { kind: 'drop_role', name: 'alice' }, /only contain add_member/],
  ])('refuses %s', (_label, operation, change, message) => {
    const result = escapeCheck(operation, [change], bundle, 'alice');
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.message).toMatch(message);
  });
});

describe('scopedChanges: properties', () => {
  const role = fc.constantFrom(...allRoles, 'ghost');
  const membership = fc.record({ role, member: fc.constantFrom('alice', 'bob'), inherit: fc.boolean() });
  const bundleArb = fc
    .uniqueArray(membership, { minLength: 1, maxLength: 4, selector: (x) => `${x.role}/${x.member}` })
    .map((ms) => ms as HeldMembership[]);
  const liveRow = fc.record({
    role,
    member: fc.constantFrom('alice', 'bob'),
    inherit: fc.boolean(),
    admin: fc.boolean(),
    grantor: fc.constantFrom<string | null>(null, 'rolepolicy', 'dba'),
  });
  const scenario = fc.record({
    bundle: bundleArb,
    rows: fc.array(liveRow, { maxLength: 6 }),
    durable: fc.array(membership, { maxLength: 2 }).map((ms) => ms.map((x) => ({ ...x, admin: false }))),
    others: fc.array(bundleArb, { maxLength: 2 }),
    version: fc.constantFrom(PG15, PG16),
  });

  /** Applies membership changes to live rows as PostgreSQL would (the executor is the grantor). */
  function apply(rows: readonly MembershipEdge[], changes: readonly Change[]): MembershipEdge[] {
    let out = [...rows];
    for (const c of changes) {
      if (c.kind === 'add_member')
        out.push({
          role: c.role,
          member: c.member,
          inherit: c.inherit,
          admin: c.admin,
          grantor: 'rolepolicy',
        });
      if (c.kind === 'remove_member') {
        out = out.filter(
          (r) => !(r.role === c.role && r.member === c.member && (r.grantor ?? null) === c.grantor),
        );
      }
    }
    return out;
  }

  const inputOf = (s: {
    bundle: HeldMembership[];
    rows: MembershipEdge[];
    durable: MembershipEdge[];
    others: HeldMembership[][];
    version: number;
  }) => ({
    request: { name: 'req', uid: 'req-uid' },
    memberships: s.bundle,
    durable: s.durable,
    otherHolders: s.others.map((ms, i) => holder(`other-${i}`, ms)),
    live: {
      memberships: s.rows,
      roles: allRoles.map((name) => ({ name, inherit: true })),
      serverVersionNum: s.version,
    },
  });

  it('every computed change passes the escape check', () => {
    fc.assert(
      fc.property(scenario, fc.constantFrom<ScopedOperation>('Activate', 'Revoke'), (s, operation) => {
        const result = scopedChanges({ ...inputOf(s), operation });
        expect(escapeCheck(operation, result.changes, s.bundle, 'alice').ok).toBe(
          s.bundle.every((b) => b.member === 'alice'),
        );
        if (operation === 'Revoke') expect(result.refusals).toEqual([]);
      }),
    );
  });

  it('an Activate applied once is converged: activating again needs no statement', () => {
    fc.assert(
      fc.property(scenario, (s) => {
        const input = inputOf(s);
        const first = scopedChanges({ ...input, operation: 'Activate' });
        fc.pre(first.refusals.length === 0);
        const again = scopedChanges({
          ...input,
          operation: 'Activate',
          live: { ...input.live, memberships: apply(s.rows, first.changes) },
        });
        expect(again.changes).toEqual([]);
        expect(again.refusals).toEqual([]);
      }),
    );
  });

  it('after a Revoke only declared or shared bundle edges remain live, and a second Revoke is empty', () => {
    fc.assert(
      fc.property(scenario, (s) => {
        const input = inputOf(s);
        const revoke = scopedChanges({ ...input, operation: 'Revoke' });
        const after = apply(s.rows, revoke.changes);
        const kept = new Set(
          [...revoke.retained, ...revoke.shared.map((x) => x.membership)].map((x) => `${x.role}/${x.member}`),
        );
        for (const b of s.bundle) {
          const stillLive = after.some((r) => r.role === b.role && r.member === b.member);
          if (stillLive) expect(kept.has(`${b.role}/${b.member}`)).toBe(true);
        }
        const again = scopedChanges({
          ...input,
          operation: 'Revoke',
          live: { ...input.live, memberships: after },
        });
        expect(again.changes).toEqual([]);
      }),
    );
  });
});
