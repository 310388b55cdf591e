// Conflict claims of peer policies: each peer's Secrets are read once per version, however many policies
// ask about it, and a pass checks only the peers the cache's changes marked (issue 28), never missing one:
// against the all-peers check as it was (test-support/all-peers-claims.ts) on random changes and passes.
import fc from 'fast-check';
import { SecretAccessError, type SecretReadResult, type SecretReader } from '@rolepolicy/contracts';
import type { SecretLike } from '@rolepolicy/kube';
import type { PolicyClaims, PostgresPolicy } from '@rolepolicy/plan-lifecycle';
import { policy } from '../../../../libs/plan-lifecycle/src/test-support/fixtures.js';
import { PeerClaims } from './peer-claims.js';
import { AllPeersClaims } from './test-support/all-peers-claims.js';
import type { PeerClaim } from './connection-digest.js';

/** A Secret as the API holds it: its version, the database its URL names, and how a read of it goes. */
interface SecretState {
  version: number;
  db: number;
  read: 'ok' | 'refused' | 'unanswered';
}

/** The cluster as the cache shows it: policies by `namespace/name` and Secrets by `namespace/name`. */
class World {
  readonly policies = new Map<string, PostgresPolicy>();
  readonly secrets = new Map<string, SecretState>();
  private created = 0;

  /** A reader of this world's Secrets, counting what it reads. */
  reader(): SecretReader & { reads: string[] } {
    const reads: string[] = [];
    return {
      reads,
      read: async (namespace, names): Promise<SecretReadResult> => {
        reads.push(...names.map((n) => `${namespace}/${n}`));
        const states = names.map((n): [string, SecretState | undefined] => [
          n,
          this.secrets.get(`${namespace}/${n}`),
        ]);
        if (states.some(([, s]) => s?.read === 'unanswered'))
          throw new SecretAccessError('Unavailable', 'no gateway answered');
        if (states.some(([, s]) => s?.read === 'refused'))
          throw new SecretAccessError('NotLabelled', 'not readable');
        const found = states.filter((e): e is [string, SecretState] => e[1] !== undefined);
        return {
          secrets: new Map(found.map(([n, s]): [string, SecretLike] => [n, secretOf(s)])),
          missing: [],
        } as unknown as SecretReadResult;
      },
    };
  }

  versionOf = (namespace: string, name: string): string =>
    String(this.secrets.get(`${namespace}/${name}`)?.version ?? '');

  /** The live policy at `key`, as `livePolicyAt` answers from the cache. */
  policyAt = (key: string): PostgresPolicy | null => {
    const found = this.policies.get(key);
    return found !== undefined && found.metadata.deletionTimestamp === undefined ? found : null;
  };

  /** Every live policy but `self` (the list the planner passed to the all-peers check). */
  peersOf(self: string): PostgresPolicy[] {
    return [...this.policies.values()].filter(
      (p) => p.metadata.deletionTimestamp === undefined && p.metadata.uid !== self,
    );
  }

  create(namespace: string, secret: string, roles: readonly string[]): string {
    const n = this.created++;
    const created = peerPolicy(namespace, `p${n}`, `uid-${n}`, secret, roles);
    this.policies.set(`${namespace}/p${n}`, created);
    return `${namespace}/p${n}`;
  }

  setSecret(key: string, change: Partial<SecretState>): void {
    const before = this.secrets.get(key) ?? { version: 0, db: 0, read: 'ok' as const };
    this.secrets.set(key, { ...before, ...change, version: before.version + 1 });
  }
}

const secretOf = (s: SecretState): SecretLike => ({
  metadata: { resourceVersion: String(s.version) },
  stringData: { DATABASE_URL: `postgres://u:pw@db.example:5432/d${s.db}` },
});

function peerPolicy(
  namespace: string,
  name: string,
  uid: string,
  secret: string,
  roles: readonly string[],
  generation = 1,
): PostgresPolicy {
  return policy(
    { connection: { secretRef: { name: secret } }, roles: roles.map((r) => ({ name: r })) } as never,
    { namespace, name, uid, generation },
  );
}

const claimsOf = (uid: string, roles: readonly string[], name = uid): PolicyClaims => ({
  namespace: 'team-a',
  name,
  uid,
  creationTimestamp: '2026-11-01T00:00:00Z',
  databaseKey: 'db.example:5432/d0',
  roles,
  schemas: [],
});

/** PeerClaims over `world`, seeded with every policy it holds (as the reconciler's start does). */
function tracking(world: World, reader: SecretReader = world.reader(), gone: string[] = []): PeerClaims {
  const peers = new PeerClaims({
    reader,
    policyAt: world.policyAt,
    versionOf: world.versionOf,
    onGone: (uid) => gone.push(uid),
  });
  for (const key of world.policies.keys()) peers.policyChanged(key);
  return peers;
}

const names = (found: readonly PeerClaim[]) => found.map((c) => c.claims.name).sort();

describe('PeerClaims', () => {
  test('every policy asking about its peers: each peer is read once', async () => {
    const world = new World();
    for (let i = 0; i < 5; i++) world.setSecret(`team-a/db-${i}`, { db: i });
    const keys = Array.from({ length: 5 }, (_, i) => world.create('team-a', `db-${i}`, ['app']));
    const reader = world.reader();
    const peers = tracking(world, reader);
    for (const key of keys) {
      const self = world.policies.get(key)!;
      expect(await peers.overlapping(claimsOf(self.metadata.uid, ['app'], self.metadata.name))).toHaveLength(
        4,
      );
    }
    expect([...reader.reads].sort()).toEqual(keys.map((_, i) => `team-a/db-${i}`));
  });

  test('a peer created before the planner started is known at the first pass', async () => {
    const world = new World();
    world.setSecret('team-a/db', {});
    world.create('team-a', 'db', ['app']);
    const peers = tracking(world);
    expect(names(await peers.overlapping(claimsOf('me', ['app'])))).toEqual(['p0']);
  });

  test('a peer whose Secret changes while no pass runs is read again at the next pass', async () => {
    const world = new World();
    world.setSecret('team-a/db', { db: 0 });
    world.setSecret('team-b/db', { db: 0 });
    world.create('team-a', 'db', ['app']);
    const reader = world.reader();
    const peers = tracking(world, reader);
    const [before] = await peers.overlapping(claimsOf('me', ['app']));
    expect(before!.claims.databaseKey).toBe('db.example:5432/d0');
    world.setSecret('team-a/db', { db: 1 });
    peers.secretChanged('team-a', 'db');
    // A Secret of the same name in another namespace is not the peer's.
    world.setSecret('team-b/db', { db: 2 });
    peers.secretChanged('team-b', 'db');
    const [after] = await peers.overlapping(claimsOf('me', ['app']));
    expect(after!.claims.databaseKey).toBe('db.example:5432/d1');
    expect(reader.reads).toEqual(['team-a/db', 'team-a/db']);
  });

  test('a peer whose spec moved (a new generation) is read again, even with the same Secret versions', async () => {
    const world = new World();
    world.setSecret('team-a/db', {});
    const key = world.create('team-a', 'db', ['other']);
    const reader = world.reader();
    const peers = tracking(world, reader);
    expect(await peers.overlapping(claimsOf('me', ['app']))).toEqual([]);
    peers.policyChanged(key); // a status write: nothing moved, nothing read
    expect(await peers.overlapping(claimsOf('me', ['app']))).toEqual([]);
    world.policies.set(key, peerPolicy('team-a', 'p0', 'uid-0', 'db', ['app'], 2));
    peers.policyChanged(key);
    expect(names(await peers.overlapping(claimsOf('me', ['app'])))).toEqual(['p0']);
    expect(reader.reads).toEqual(['team-a/db', 'team-a/db']);
  });

  test('a deleted or deleting peer no longer blocks, and what is remembered of it is let go', async () => {
    const world = new World();
    world.setSecret('team-a/db', {});
    const [a, b] = [world.create('team-a', 'db', ['app']), world.create('team-a', 'db', ['app'])];
    const gone: string[] = [];
    const peers = tracking(world, world.reader(), gone);
    expect(names(await peers.overlapping(claimsOf('me', ['app'])))).toEqual(['p0', 'p1']);
    world.policies.delete(a);
    peers.policyChanged(a);
    const deleting = world.policies.get(b)!;
    world.policies.set(b, { ...deleting, metadata: { ...deleting.metadata, deletionTimestamp: 'now' } });
    peers.policyChanged(b);
    expect(await peers.overlapping(claimsOf('me', ['app']))).toEqual([]);
    expect(gone).toEqual(['uid-0', 'uid-1']);
    expect(peers.policyOf(claimsOf('uid-1', ['app'], 'p1'))).toBeUndefined();
  });

  test('an unanswered read fails the pass, and the peer is read again at the next one', async () => {
    const world = new World();
    world.setSecret('team-a/db', { read: 'unanswered' });
    world.create('team-a', 'db', ['app']);
    const reader = world.reader();
    const peers = tracking(world, reader);
    await expect(peers.overlapping(claimsOf('me', ['app']))).rejects.toThrow('no gateway answered');
    world.secrets.get('team-a/db')!.read = 'ok'; // the gateway is back; the Secret did not change
    expect(names(await peers.overlapping(claimsOf('me', ['app'])))).toEqual(['p0']);
    expect(reader.reads).toHaveLength(2);
  });
});

/** One step of a random history: a change to the world (reported to PeerClaims) or a pass. */
type Step =
  | { kind: 'create'; ns: number; secret: number; roles: string[] }
  | { kind: 'edit'; pick: number; secret: number; roles: string[] }
  | { kind: 'status'; pick: number }
  | { kind: 'secret'; ns: number; secret: number; db: number; read: SecretState['read'] }
  | { kind: 'delete'; pick: number; deleting: boolean }
  | { kind: 'pass'; pick: number; outsider: boolean; roles: string[] };

const ROLES = ['r0', 'r1', 'r2'];
const roles = fc.subarray(ROLES);
const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant('create' as const), ns: fc.nat(1), secret: fc.nat(2), roles }),
  fc.record({ kind: fc.constant('edit' as const), pick: fc.nat(), secret: fc.nat(2), roles }),
  fc.record({ kind: fc.constant('status' as const), pick: fc.nat() }),
  fc.record({
    kind: fc.constant('secret' as const),
    ns: fc.nat(1),
    secret: fc.nat(2),
    db: fc.nat(2),
    read: fc.constantFrom('ok' as const, 'ok' as const, 'refused' as const, 'unanswered' as const),
  }),
  fc.record({ kind: fc.constant('delete' as const), pick: fc.nat(), deleting: fc.boolean() }),
  fc.record({ kind: fc.constant('pass' as const), pick: fc.nat(), outsider: fc.boolean(), roles }),
  fc.record({ kind: fc.constant('pass' as const), pick: fc.nat(), outsider: fc.boolean(), roles }),
);

/** What a pass saw: the candidates' claims and connections, or that it failed. */
async function outcome(found: Promise<PeerClaim[]>): Promise<string> {
  try {
    return JSON.stringify((await found).sort((x, y) => x.claims.uid.localeCompare(y.claims.uid)));
  } catch (error) {
    return `failed: ${(error as Error).message}`;
  }
}

/** Applies one change to the world and reports it as the reconciler does (policy key or Secret). */
function apply(world: World, peers: PeerClaims, s: Exclude<Step, { kind: 'pass' }>): void {
  const keys = [...world.policies.keys()];
  const picked = keys.length === 0 || !('pick' in s) ? undefined : keys[s.pick % keys.length]!;
  if (s.kind === 'create') {
    peers.policyChanged(world.create(`ns${s.ns}`, `db-${s.secret}`, s.roles));
  } else if (s.kind === 'secret') {
    world.setSecret(`ns${s.ns}/db-${s.secret}`, { db: s.db, read: s.read });
    peers.secretChanged(`ns${s.ns}`, `db-${s.secret}`);
  } else if (picked !== undefined) {
    const p = world.policies.get(picked)!;
    const m = p.metadata;
    if (s.kind === 'edit')
      world.policies.set(
        picked,
        peerPolicy(m.namespace, m.name, m.uid, `db-${s.secret}`, s.roles, m.generation + 1),
      );
    if (s.kind === 'status') world.policies.set(picked, { ...p, metadata: { ...m } });
    if (s.kind === 'delete' && s.deleting)
      world.policies.set(picked, { ...p, metadata: { ...m, deletionTimestamp: 'now' } });
    if (s.kind === 'delete' && !s.deleting) world.policies.delete(picked);
    peers.policyChanged(picked);
  }
}

test('on random creations, spec edits, Secret changes, deletions and passes: the same candidates as checking every peer', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 40 }), fc.nat(6), async (steps, seeded) => {
      const world = new World();
      for (let i = 0; i < 6; i++) world.setSecret(`ns${i % 2}/db-${i % 3}`, { db: i % 3 });
      // Policies that exist before the planner starts (seeded from the cache).
      for (let i = 0; i < seeded; i++) world.create(`ns${i % 2}`, `db-${i % 3}`, [ROLES[i % 3]!]);
      const oracle = new AllPeersClaims(world.reader(), world.versionOf);
      const peers = tracking(world);
      for (const s of steps) {
        if (s.kind !== 'pass') {
          apply(world, peers, s);
          continue;
        }
        const live = world.peersOf('');
        const asking = s.outsider || live.length === 0 ? undefined : live[s.pick % live.length]!;
        const self = claimsOf(asking?.metadata.uid ?? 'outsider', s.roles);
        const expected = await outcome(oracle.overlapping(world.peersOf(self.uid), self));
        expect(await outcome(peers.overlapping(self))).toBe(expected);
      }
    }),
    { numRuns: 300 },
  );
});
