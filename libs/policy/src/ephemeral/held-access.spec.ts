import fc from 'fast-check';
import type { MembershipEdge } from '../model/state.js';
import {
  composeHeldAccess,
  heldAccessConflictMessage,
  withHeldAccess,
  type AnchoredRequest,
} from './held-access.js';

const FP = 'sha256:aaaa';
const roles = ['app', 'alice', 'bob', 'reader', 'writer', 'admin_ops'];

const request = (
  name: string,
  memberships: { role: string; member: string; inherit?: boolean }[],
  fingerprint = FP,
): AnchoredRequest => ({
  name,
  uid: `${name}-uid`,
  targetDatabaseFingerprint: fingerprint,
  memberships: memberships.map((m) => ({ role: m.role, member: m.member, inherit: m.inherit ?? true })),
});

const edge = (role: string, member: string, inherit = true, admin = false): MembershipEdge => ({
  role,
  member,
  inherit,
  admin,
});

describe('composeHeldAccess', () => {
  it('adds the edges of an anchored request to the desired memberships, admin false', () => {
    const overlay = composeHeldAccess({
      desired: [edge('reader', 'app')],
      roles,
      requests: [request('r1', [{ role: 'writer', member: 'alice', inherit: false }])],
      targetFingerprint: FP,
    });
    expect(overlay.conflicts).toEqual([]);
    expect(overlay.edges).toEqual([edge('writer', 'alice', false, false)]);
    expect(withHeldAccess([edge('reader', 'app')], overlay)).toEqual([
      edge('reader', 'app'),
      edge('writer', 'alice', false),
    ]);
  });

  it('skips an edge the base policy already declares, noting when its options differ', () => {
    const overlay = composeHeldAccess({
      desired: [edge('reader', 'alice', true, true), edge('writer', 'alice', false)],
      roles,
      requests: [
        request('r1', [
          { role: 'reader', member: 'alice' },
          { role: 'writer', member: 'alice', inherit: false },
        ]),
      ],
      targetFingerprint: FP,
    });
    expect(overlay.edges).toEqual([]);
    expect(overlay.conflicts).toEqual([]);
    expect(overlay.skipped.map((s) => [s.membership.role, s.optionsDiffer])).toEqual([
      ['reader', true],
      ['writer', false],
    ]);
  });

  it('one edge held by two requests with the same inherit is added once', () => {
    const overlay = composeHeldAccess({
      desired: [],
      roles,
      requests: [
        request('r2', [{ role: 'writer', member: 'alice' }]),
        request('r1', [{ role: 'writer', member: 'alice' }]),
      ],
      targetFingerprint: FP,
    });
    expect(overlay.edges).toEqual([edge('writer', 'alice')]);
  });

  it('a changed target fingerprint is a conflict naming the request and its uid, and adds nothing', () => {
    const overlay = composeHeldAccess({
      desired: [],
      roles,
      requests: [
        request('r1', [{ role: 'writer', member: 'alice' }], 'sha256:other'),
        request('r2', [{ role: 'reader', member: 'bob' }]),
      ],
      targetFingerprint: FP,
    });
    expect(overlay.edges).toEqual([]);
    expect(overlay.conflicts).toHaveLength(1);
    expect(overlay.conflicts[0]).toMatchObject({
      kind: 'TargetFingerprintChanged',
      requests: [{ name: 'r1', uid: 'r1-uid' }],
    });
    expect(overlay.conflicts[0]!.message).toContain('request r1 (uid r1-uid)');
  });

  it('a granted role the policy no longer declares is a conflict', () => {
    const overlay = composeHeldAccess({
      desired: [],
      roles: roles.filter((r) => r !== 'writer'),
      requests: [request('r1', [{ role: 'writer', member: 'alice' }])],
      targetFingerprint: FP,
    });
    expect(overlay.conflicts.map((c) => c.kind)).toEqual(['GrantedRoleNotInPolicy']);
    expect(overlay.conflicts[0]!.message).toMatch(
      /request r1 \(uid r1-uid\).*no longer declares role writer/,
    );
  });

  it('a subject the policy no longer declares is a conflict', () => {
    const overlay = composeHeldAccess({
      desired: [],
      roles: roles.filter((r) => r !== 'alice'),
      requests: [request('r1', [{ role: 'writer', member: 'alice' }])],
      targetFingerprint: FP,
    });
    expect(overlay.conflicts.map((c) => c.kind)).toEqual(['SubjectNotInPolicy']);
    expect(overlay.conflicts[0]!.message).toContain('subject role alice');
  });

  it('two requests asking for one edge with different inherit conflict, naming both', () => {
    const overlay = composeHeldAccess({
      desired: [],
      roles,
      requests: [
        request('r1', [{ role: 'writer', member: 'alice', inherit: true }]),
        request('r2', [{ role: 'writer', member: 'alice', inherit: false }]),
      ],
      targetFingerprint: FP,
    });
    expect(overlay.edges).toEqual([]);
    expect(overlay.conflicts).toHaveLength(1);
    expect(overlay.conflicts[0]!.kind).toBe('ConflictingInherit');
    expect(overlay.conflicts[0]!.requests.map((r) => r.uid)).toEqual(['r1-uid', 'r2-uid']);
    expect(overlay.conflicts[0]!.message).toContain('inherit true by request r1 (uid r1-uid)');
    expect(overlay.conflicts[0]!.message).toContain('inherit false by request r2 (uid r2-uid)');
  });

  it('the conflict message lists the first few and counts the rest', () => {
    const overlay = composeHeldAccess({
      desired: [],
      roles: [],
      requests: Array.from({ length: 7 }, (_, i) => request(`r${i}`, [{ role: 'writer', member: 'alice' }])),
      targetFingerprint: FP,
    });
    const message = heldAccessConflictMessage(overlay.conflicts);
    expect(message).toMatch(/^ephemeral access blocks the reconcile: /);
    expect(message).toContain('and 2 more');
  });

  describe('properties', () => {
    const name = fc.constantFrom(...roles);
    const membership = fc.record({ role: name, member: name, inherit: fc.boolean() });
    const anchored = fc
      .tuple(
        fc.integer({ min: 0, max: 20 }),
        fc.array(membership, { minLength: 1, maxLength: 4 }),
        fc.boolean(),
      )
      .map(([i, ms, same]) => request(`req-${i}`, ms, same ? FP : 'sha256:moved'));
    const desiredEdges = fc
      .array(fc.record({ role: name, member: name, inherit: fc.boolean(), admin: fc.boolean() }), {
        maxLength: 6,
      })
      .map((es) => [...new Map(es.map((e) => [`${e.role}/${e.member}`, e])).values()]);
    const input = fc.record({
      desired: desiredEdges,
      roles: fc.subarray(roles),
      requests: fc.uniqueArray(anchored, { maxLength: 5, selector: (r) => r.name }),
    });

    it('does not depend on the order of the requests', () => {
      fc.assert(
        fc.property(input, ({ desired, roles: rs, requests }) => {
          const a = composeHeldAccess({ desired, roles: rs, requests, targetFingerprint: FP });
          const b = composeHeldAccess({
            desired,
            roles: rs,
            requests: [...requests].reverse(),
            targetFingerprint: FP,
          });
          expect(b).toEqual(a);
        }),
      );
    });

    it('adds only admin-false edges of anchored requests that the policy does not declare, or nothing on conflict', () => {
      fc.assert(
        fc.property(input, ({ desired, roles: rs, requests }) => {
          const overlay = composeHeldAccess({ desired, roles: rs, requests, targetFingerprint: FP });
          if (overlay.conflicts.length > 0) expect(overlay.edges).toEqual([]);
          const declared = new Set(desired.map((e) => `${e.role}/${e.member}`));
          for (const e of overlay.edges) {
            expect(e.admin).toBe(false);
            expect(declared.has(`${e.role}/${e.member}`)).toBe(false);
            expect(rs).toContain(e.role);
            expect(rs).toContain(e.member);
            expect(
              requests.some((r) =>
                r.memberships.some(
                  (m) => m.role === e.role && m.member === e.member && m.inherit === e.inherit,
                ),
              ),
            ).toBe(true);
          }
          const merged = withHeldAccess(desired, overlay);
          expect(new Set(merged.map((e) => `${e.role}/${e.member}`)).size).toBe(merged.length);
        }),
      );
    });

    it('every conflict names at least one request by name and uid', () => {
      fc.assert(
        fc.property(input, ({ desired, roles: rs, requests }) => {
          for (const c of composeHeldAccess({ desired, roles: rs, requests, targetFingerprint: FP })
            .conflicts) {
            expect(c.requests.length).toBeGreaterThan(0);
            for (const r of c.requests) expect(c.message).toContain(`request ${r.name} (uid ${r.uid})`);
          }
        }),
      );
    });
  });
});
