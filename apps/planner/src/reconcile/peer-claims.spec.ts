// Conflict claims of peer policies: each peer's Secrets are read once per version, however many policies
// ask about it, including across each asking policy's own pass.
import type { SecretLike } from '@rolepolicy/kube';
import type { SecretReadResult } from '@rolepolicy/contracts';
import { policy } from '../../../../libs/plan-lifecycle/src/test-support/fixtures.js';
import type { SecretReader } from '@rolepolicy/contracts';
import { PeerClaims } from './peer-claims.js';

const secret = (db: string): SecretLike => ({
  metadata: { resourceVersion: '5' },
  stringData: { DATABASE_URL: `postgres://u:pw@db.example:5432/${db}` },
});

function fleet(count: number) {
  return Array.from({ length: count }, (_, i) =>
    policy({ connection: { secretRef: { name: `db-${i}` } } } as never, { name: `p${i}`, uid: `uid-${i}` }),
  );
}

function countingReader(): SecretReader & { reads: string[] } {
  const reads: string[] = [];
  return {
    reads,
    read: async (_namespace, names): Promise<SecretReadResult> => {
      reads.push(...names);
      return { secrets: new Map(names.map((n) => [n, secret(n)])) } as unknown as SecretReadResult;
    },
  };
}

test('every policy asking about its peers: each peer is read once', async () => {
  const reader = countingReader();
  const claims = new PeerClaims(reader, () => '5');
  const policies = fleet(5);
  for (const self of policies) {
    const peers = policies.filter((p) => p !== self);
    expect(await claims.of(peers, self.metadata.uid)).toHaveLength(4);
  }
  expect([...reader.reads].sort()).toEqual(['db-0', 'db-1', 'db-2', 'db-3', 'db-4']);
});

test('a new Secret version or a gone peer is read again or forgotten', async () => {
  const reader = countingReader();
  let version = '5';
  const claims = new PeerClaims(reader, () => version);
  const [a, b, c] = fleet(3) as [
    ReturnType<typeof policy>,
    ReturnType<typeof policy>,
    ReturnType<typeof policy>,
  ];
  await claims.of([b, c], a.metadata.uid);
  version = '6';
  await claims.of([b], a.metadata.uid); // c deleted, b's Secret changed
  expect(reader.reads).toEqual(['db-1', 'db-2', 'db-1']);
  version = '6';
  await claims.of([b, c], a.metadata.uid); // c is back: it was forgotten, so it is read again
  expect(reader.reads).toEqual(['db-1', 'db-2', 'db-1', 'db-2']);
});

test('a peer whose spec moved (a new generation) is read again, even with the same Secret versions', async () => {
  const reader = countingReader();
  const claims = new PeerClaims(reader, () => '5');
  const [a, b] = fleet(2) as [ReturnType<typeof policy>, ReturnType<typeof policy>];
  await claims.of([b], a.metadata.uid);
  await claims.of([b], a.metadata.uid);
  const edited = { ...b, metadata: { ...b.metadata, generation: b.metadata.generation + 1 } };
  await claims.of([edited], a.metadata.uid);
  expect(reader.reads).toEqual(['db-1', 'db-1']);
});

describe('the peers that can overlap a policy (issue 28: not every peer on every pass)', () => {
  const withRoles = (i: number, roles: string[], generation = 1) =>
    policy(
      { connection: { secretRef: { name: `db-${i}` } }, roles: roles.map((name) => ({ name })) } as never,
      { name: `p${i}`, uid: `uid-${i}`, generation },
    );
  const claimsOf = (i: number, roles: string[]) => ({
    namespace: 'team-a',
    name: `p${i}`,
    uid: `uid-${i}`,
    creationTimestamp: '2026-11-01T00:00:00Z',
    databaseKey: `db.example:5432/db-${i}`,
    roles,
    schemas: [],
  });

  test('only peers sharing a role name are returned, and each peer is read once', async () => {
    const reader = countingReader();
    const claims = new PeerClaims(reader, () => '5');
    const peers = [withRoles(1, ['app']), withRoles(2, ['other']), withRoles(3, ['app', 'x'])];
    const found = await claims.overlapping(peers, claimsOf(0, ['app']));
    expect(found.map((c) => c.claims.name).sort()).toEqual(['p1', 'p3']);
    expect(await claims.overlapping(peers, claimsOf(4, ['other']))).toEqual([
      expect.objectContaining({ claims: expect.objectContaining({ name: 'p2' }) }),
    ]);
    expect([...reader.reads].sort()).toEqual(['db-1', 'db-2', 'db-3']);
  });

  test('a peer that starts claiming the role is found once its new generation is read; a gone peer is not', async () => {
    const reader = countingReader();
    const claims = new PeerClaims(reader, () => '5');
    const self = claimsOf(0, ['app']);
    expect(await claims.overlapping([withRoles(1, ['other']), withRoles(2, ['app'])], self)).toHaveLength(1);
    const found = await claims.overlapping([withRoles(1, ['app'], 2)], self);
    expect(found.map((c) => c.claims.name)).toEqual(['p1']);
    expect(reader.reads).toEqual(['db-1', 'db-2', 'db-1']);
  });
});
