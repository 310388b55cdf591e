// The sweep of a target's ephemeral edges (ADR 0020): what is revoked, what is kept, and the escape check.
import fc from 'fast-check';
import type { MembershipEdge } from '../model/state.js';
import type { AnchoredRequest } from './held-access.js';
import { sweepChanges, sweepEscapeCheck, type SweepInput } from './sweep.js';

const row = (role: string, member: string, grantor: string | null = 'rolepolicy'): MembershipEdge => ({
  role,
  member,
  inherit: true,
  admin: false,
  grantor,
});
const holder = (name: string, role: string, member: string, inherit = true): AnchoredRequest => ({
  name,
  uid: `${name}-uid`,
  targetDatabaseFingerprint: 'sha256:elsewhere',
  memberships: [{ role, member, inherit }],
});
const input = (over: Partial<SweepInput> = {}): SweepInput => ({
  bundleRoles: ['reader', 'writer'],
  members: ['alice', 'bob', 'reader', 'writer', 'app'],
  live: [],
  durable: [],
  holders: [],
  ...over,
});

describe('sweepChanges', () => {
  it('revokes every grantor row of a bundle edge nobody holds, and reports the edge once', () => {
    const result = sweepChanges(input({ live: [row('reader', 'alice', 'x'), row('reader', 'alice', null)] }));
    expect(result.changes).toEqual([
      { kind: 'remove_member', role: 'reader', member: 'alice', grantor: null },
      { kind: 'remove_member', role: 'reader', member: 'alice', grantor: 'x' },
    ]);
    expect(result.swept).toEqual([{ role: 'reader', member: 'alice' }]);
  });

  it('keeps an edge an anchored request holds, whatever its inherit or the database it was resolved for', () => {
    const result = sweepChanges(
      input({ live: [row('reader', 'alice')], holders: [holder('a', 'reader', 'alice', false)] }),
    );
    expect(result).toEqual({ changes: [], swept: [], kept: 1 });
  });

  it('keeps an edge the policy declares (additive or not, it is not temporary access)', () => {
    const result = sweepChanges(
      input({ live: [row('writer', 'app')], durable: [{ ...row('writer', 'app'), grantor: undefined }] }),
    );
    expect(result.changes).toEqual([]);
  });

  it('never touches a role no access policy names, nor a member the policy does not name', () => {
    const result = sweepChanges(input({ live: [row('admin', 'alice'), row('reader', 'dba')] }));
    expect(result.changes).toEqual([]);
    expect(result.kept).toBe(0);
  });

  it('only ever removes rows of bundle roles from policy roles that are neither declared nor held', () => {
    const name = fc.constantFrom('reader', 'writer', 'admin', 'alice', 'bob', 'dba');
    const edge = fc.record({ role: name, member: name });
    fc.assert(
      fc.property(
        fc.array(edge, { maxLength: 8 }),
        fc.array(edge, { maxLength: 3 }),
        fc.array(edge, { maxLength: 3 }),
        (live, declared, held) => {
          const i = input({
            live: live.map((e) => row(e.role, e.member)),
            durable: declared.map((e) => row(e.role, e.member)),
            holders: held.map((e, n) => holder(`h${n}`, e.role, e.member)),
          });
          const result = sweepChanges(i);
          expect(sweepEscapeCheck(result.changes, i)).toEqual({ ok: true });
          const liveKeys = new Set(live.map((e) => `${e.role}/${e.member}`));
          for (const c of result.changes) expect(liveKeys.has(`${c.role}/${c.member}`)).toBe(true);
        },
      ),
    );
  });
});

describe('sweepEscapeCheck', () => {
  it('refuses a grant, a foreign role, a foreign member and a held edge', () => {
    const i = input({ holders: [holder('a', 'reader', 'bob')] });
    const grant = {
      kind: 'add_member',
      role: 'reader',
      member: 'alice',
      inherit: true,
      admin: false,
    } as const;
    const remove = (role: string, member: string) =>
      ({ kind: 'remove_member', role, member, grantor: null }) as const;
    expect(sweepEscapeCheck([grant], i)).toMatchObject({
      ok: false,
      message: expect.stringMatching(/only contain remove_member/),
    });
    expect(sweepEscapeCheck([remove('admin', 'alice')], i)).toMatchObject({
      ok: false,
      message: expect.stringMatching(/role admin is not a bundle role/),
    });
    expect(sweepEscapeCheck([remove('reader', 'dba')], i)).toMatchObject({
      ok: false,
      message: expect.stringMatching(/role dba is not a role of the target policy/),
    });
    expect(sweepEscapeCheck([remove('reader', 'bob')], i)).toMatchObject({
      ok: false,
      message: expect.stringMatching(/held by an active request/),
    });
    expect(sweepEscapeCheck([remove('reader', 'alice')], i)).toEqual({ ok: true });
  });
});
