// Issue 28 ("Scale"): the verdict of a policy over the peers its index can find equals the verdict over every
// peer, so indexing conflict detection changes its cost and never its answer.
import fc from 'fast-check';
import { blockingClaims, detectConflict, type PolicyClaims } from './conflict.js';
import { ClaimIndex } from './conflict-index.js';

const ROLES = ['app', 'ro', 'rw', 'admin'];
const SCHEMAS = ['orders', 'billing', 'public'];

/** Claims over a few servers (one aliased by two addresses), databases, names and times, so ties happen. */
const claimsArb = (uid: string): fc.Arbitrary<PolicyClaims> =>
  fc.record({
    namespace: fc.constantFrom('team-a', 'team-b'),
    name: fc.constantFrom('p', 'q', 'r'),
    uid: fc.constant(uid),
    creationTimestamp: fc.constantFrom('2026-01-01T00:00:00Z', '2026-01-02T00:00:00Z', undefined),
    databaseKey: fc
      .tuple(fc.constantFrom('h1:5432', 'h2:5432', '10.0.0.1:5432'), fc.constantFrom('/a', '/b', ''))
      .map(([server, db]) => server + db),
    serverIdentity: fc.constantFrom(undefined, null, 'sys-1', 'sys-2'),
    roles: fc.subarray(ROLES),
    externalRoles: fc.subarray(ROLES),
    schemas: fc.subarray(SCHEMAS),
  });

const fleetArb = fc
  .integer({ min: 1, max: 12 })
  .chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => claimsArb(`uid-${i}`))));

test('the indexed verdict equals the all-peers verdict on random claim sets', () => {
  fc.assert(
    fc.property(fleetArb, (fleet) => {
      const index = new ClaimIndex<PolicyClaims>();
      for (const claims of fleet) index.set(claims, claims);
      for (const self of fleet) {
        const peers = fleet.filter((p) => p !== self);
        const candidates = index.candidates(self);
        expect(candidates).not.toContain(self);
        expect(blockingClaims(self, candidates)).toEqual(blockingClaims(self, peers));
        expect(detectConflict(self, candidates)).toEqual(detectConflict(self, peers));
      }
    }),
    { numRuns: 500 },
  );
});

test('a forgotten or re-indexed peer is found by its current claims only', () => {
  const index = new ClaimIndex<string>();
  const base = { namespace: 'n', creationTimestamp: undefined, schemas: [] as string[] };
  const self = { ...base, name: 'self', uid: 'self', databaseKey: 'h:5432/a', roles: ['app'] };
  index.set({ ...base, name: 'peer', uid: 'peer', databaseKey: 'h:5432/b', roles: ['app'] }, 'v1');
  expect(index.candidates(self)).toEqual(['v1']);
  index.set({ ...base, name: 'peer', uid: 'peer', databaseKey: 'h:5432/b', roles: ['other'] }, 'v2');
  expect(index.candidates(self)).toEqual([]);
  index.set({ ...base, name: 'peer', uid: 'peer', databaseKey: 'h:5432/b', roles: ['app'] }, 'v3');
  index.delete('peer');
  expect(index.candidates(self)).toEqual([]);
  expect(index.size).toBe(0);
});
