// The overlay seen through the engine's membership diff (what an authoritative reconcile plans): an edge an
// anchored request holds is never revoked, a stray edge nobody declares or holds always is.
import fc from 'fast-check';
import { diffMemberships } from '../diff/diff-memberships.js';
import type { MembershipEdge } from '../model/state.js';
import { composeHeldAccess, withHeldAccess, type AnchoredRequest } from './held-access.js';

const FP = 'sha256:fp';
const ROLES = ['alice', 'bob', 'reader', 'writer', 'ops'];
const key = (e: { role: string; member: string }): string => `${e.role}/${e.member}`;

const edge = fc.record({
  role: fc.constantFrom(...ROLES),
  member: fc.constantFrom('alice', 'bob'),
  inherit: fc.boolean(),
  admin: fc.boolean(),
});
const uniqueEdges = (max: number) =>
  fc.uniqueArray(edge, { maxLength: max, selector: key }).map((es) => es as MembershipEdge[]);
const requests = fc.array(uniqueEdges(3), { maxLength: 3 }).map((bundles): AnchoredRequest[] =>
  bundles.map((ms, i) => ({
    name: `r${i}`,
    uid: `uid-${i}`,
    targetDatabaseFingerprint: FP,
    memberships: ms.map(({ role, member, inherit }) => ({ role, member, inherit })),
  })),
);

describe('overlay through the membership diff (authoritative reconcile)', () => {
  it.each([150000, 170000])(
    'server %i: held edges are kept, stray edges removed, adds only declared or held',
    (version) => {
      fc.assert(
        fc.property(uniqueEdges(4), requests, uniqueEdges(6), (declared, held, live) => {
          const overlay = composeHeldAccess({
            desired: declared,
            roles: ROLES,
            requests: held,
            targetFingerprint: FP,
          });
          fc.pre(overlay.conflicts.length === 0);
          const desired = withHeldAccess(declared, overlay);
          const current = live.map((e) => ({ ...e, grantor: null }));
          const { removes, adds } = diffMemberships({
            desired,
            current,
            executorRole: 'executor',
            serverVersionNum: version,
          });
          const removed = new Set(removes.map(key));
          const added = new Set(adds.map(key));
          const declaredKeys = new Set(declared.map(key));
          for (const e of overlay.edges) {
            const row = current.find((c) => key(c) === key(e));
            const same = row !== undefined && !row.admin && (version < 160000 || row.inherit === e.inherit);
            // A held edge that is live with the request's options survives; one that is not gets (re)granted.
            expect(removed.has(key(e))).toBe(row !== undefined && !same);
            expect(added.has(key(e))).toBe(!same);
          }
          const heldKeys = new Set(overlay.edges.map(key));
          for (const row of current) {
            if (!declaredKeys.has(key(row)) && !heldKeys.has(key(row)))
              expect(removed.has(key(row))).toBe(true);
          }
          for (const a of adds) expect(declaredKeys.has(key(a)) || heldKeys.has(key(a))).toBe(true);
        }),
      );
    },
  );
});
