// ADR 0024: a conflict claim counts only once its connection reached the database, a proof is asked when a
// blocking peer has none (a planner that just started), and another namespace is revealed to nobody who
// cannot log in. The inspector is a stand-in that opens the sealed connection and answers by its user name.
import type { NatsConnection } from '@nats-io/transport-node';
import {
  decodePayload,
  encodePayload,
  exportedKeyPair,
  inspectReplyContract,
  inspectRequestContract,
  keyPairFromPrivateKey,
  openInspectConnection,
  type SecretReadResult,
} from '@rolepolicy/contracts';
import type { ResolvedConnectionSpec } from '@rolepolicy/kube';
import { policy } from '../../../../libs/plan-lifecycle/src/test-support/fixtures.js';
import type { PolicyClaims, PostgresPolicy } from '@rolepolicy/plan-lifecycle';
import { ConflictProof } from './conflict-proof.js';
import { connectionDigest, type PeerClaim } from './connection-digest.js';
import { peerClaims } from '../planning/prepare.js';
import type { SecretReader } from '@rolepolicy/contracts';

const keys = exportedKeyPair();
const opener = keyPairFromPrivateKey(keys.privateKey);
const urlOf = (user: string) => `postgres://${user}:pw@db.example:5432/app`;

/** Every Secret holds the URL its name says: `<user>-db` logs in as `<user>`. */
const reader: SecretReader = {
  read: async (_namespace, names): Promise<SecretReadResult> =>
    ({
      secrets: new Map(
        names.map((n) => [
          n,
          { metadata: { resourceVersion: '1' }, stringData: { DATABASE_URL: urlOf(n.replace(/-db$/, '')) } },
        ]),
      ),
      missing: [],
    }) as unknown as SecretReadResult,
};

/** An inspector that lets `good` log in, refuses every other user, and never answers when `silent`. */
function inspector(silent = false): { nats: NatsConnection; asked: string[] } {
  const asked: string[] = [];
  const nats = {
    request: async (_subject: string, data: Uint8Array) => {
      if (silent) throw new Error('503 no responders');
      const request = decodePayload(inspectRequestContract, data);
      if (!request.ok) throw new Error(request.detail);
      const opened = openInspectConnection(request.value, opener);
      if (!opened.ok || !('url' in opened.connection)) throw new Error('not opened');
      const user = new URL(opened.connection.url).username;
      asked.push(`${request.value.source.namespace}/${request.value.source.name} as ${user}`);
      const base = { v: 1 as const, requestId: request.value.requestId };
      const reply =
        user === 'good'
          ? {
              ...base,
              status: 'inline' as const,
              snapshot: { server_version_num: 150000, current_database: 'app', roles: [] } as never,
            }
          : {
              ...base,
              status: 'error' as const,
              error: { class: 'permanent' as const, code: '28000', message: `role "${user}" does not exist` },
            };
      return { data: encodePayload(inspectReplyContract, reply) };
    },
  } as unknown as NatsConnection;
  return { nats, asked };
}

function tenant(namespace: string, name: string, user: string, created: string): PostgresPolicy {
  return policy({ connection: { secretRef: { name: `${user}-db` } }, roles: [{ name: 'app' }] } as never, {
    namespace,
    name,
    uid: `uid-${namespace}-${name}`,
    creationTimestamp: created,
  });
}

function claimOf(p: PostgresPolicy): PeerClaim & { resolved: ResolvedConnectionSpec } {
  const user = (p.spec.connection as { secretRef: { name: string } }).secretRef.name.replace(/-db$/, '');
  const lookup = () => ({ metadata: { resourceVersion: '1' }, stringData: { DATABASE_URL: urlOf(user) } });
  const resolved = peerClaims(p, lookup as never)!;
  return {
    claims: resolved.claims,
    connection: connectionDigest(resolved.connection),
    resolved: resolved.connection,
  };
}

const self = (p: PostgresPolicy) => {
  const c = claimOf(p);
  return { policy: p, claims: c.claims, connection: c.resolved };
};

/** The live policies a verdict may look a peer up in. */
const policies =
  (...list: PostgresPolicy[]) =>
  (claims: PolicyClaims): PostgresPolicy | undefined =>
    list.find((p) => p.metadata.uid === claims.uid);

const EARLY = '2026-01-01T00:00:00Z';
const LATE = '2026-02-01T00:00:00Z';

test('a senior claim whose connection never logs in blocks nobody', async () => {
  const { nats, asked } = inspector();
  const proof = new ConflictProof({
    nats,
    secrets: reader,
    inspectTimeoutMs: 1000,
    inspectSealKey: keys.publicKey,
  });
  const squatter = tenant('team-b', 'squatter', 'stranger', EARLY);
  const owner = tenant('team-a', 'owner', 'good', LATE);
  const result = await proof.verdict(self(owner), [claimOf(squatter)], policies(squatter));
  expect(result).toEqual({ kind: 'verdict', verdict: { kind: 'clear' } });
  expect(asked).toEqual(['team-b/squatter as stranger']);
});

test('a senior peer with no proof yet (a planner that just started) is proven at once and makes the later yield', async () => {
  const { nats, asked } = inspector();
  const proof = new ConflictProof({
    nats,
    secrets: reader,
    inspectTimeoutMs: 1000,
    inspectSealKey: keys.publicKey,
  });
  const senior = tenant('team-a', 'first', 'good', EARLY);
  const junior = tenant('team-a', 'second', 'good', LATE);
  for (let pass = 0; pass < 2; pass++) {
    const result = await proof.verdict(self(junior), [claimOf(senior)], policies(senior));
    expect(result).toMatchObject({ kind: 'verdict', verdict: { kind: 'conflict' } });
    if (result.kind === 'verdict' && result.verdict.kind === 'conflict')
      expect(result.verdict.message).toContain('team-a/first (roles: app; schemas: -)');
  }
  // Remembered: the second pass asks nothing.
  expect(asked).toEqual(['team-a/first as good']);
});

test('a proof no longer holds once the peer connects differently', async () => {
  const { nats, asked } = inspector();
  const proof = new ConflictProof({
    nats,
    secrets: reader,
    inspectTimeoutMs: 1000,
    inspectSealKey: keys.publicKey,
  });
  const senior = tenant('team-a', 'first', 'good', EARLY);
  const junior = tenant('team-a', 'second', 'good', LATE);
  proof.noteReached(senior.metadata.uid, { url: urlOf('someone-else'), setRole: null });
  await proof.verdict(self(junior), [claimOf(senior)], policies(senior));
  expect(asked).toEqual(['team-a/first as good']);
});

test('another namespace is revealed only to a policy whose own connection logs in, and then never named', async () => {
  const { nats } = inspector();
  const proof = new ConflictProof({
    nats,
    secrets: reader,
    inspectTimeoutMs: 1000,
    inspectSealKey: keys.publicKey,
  });
  const owner = tenant('team-a', 'owner', 'good', EARLY);
  proof.noteReached(owner.metadata.uid, self(owner).connection);
  const prober = tenant('team-b', 'prober', 'stranger', LATE);
  const probed = await proof.verdict(self(prober), [claimOf(owner)], policies(owner));
  expect(probed).toMatchObject({
    kind: 'failed',
    error: { class: 'permanent', reason: 'DatabaseConnectionFailed' },
  });
  expect(JSON.stringify(probed)).not.toContain('team-a');

  const sharer = tenant('team-b', 'sharer', 'good', LATE);
  const shared = await proof.verdict(self(sharer), [claimOf(owner)], policies(owner));
  if (shared.kind !== 'verdict' || shared.verdict.kind !== 'conflict') throw new Error('expected a conflict');
  expect(shared.verdict.message).toContain('a policy in another namespace (roles: app; schemas: -)');
  expect(shared.verdict.message).not.toContain('team-a');
  expect(shared.verdict.message).not.toContain('owner');
});

test('no inspector answering a proof fails the pass (transient) instead of deciding without the peer', async () => {
  const { nats } = inspector(true);
  const proof = new ConflictProof({
    nats,
    secrets: reader,
    inspectTimeoutMs: 1000,
    inspectSealKey: keys.publicKey,
  });
  const senior = tenant('team-a', 'first', 'good', EARLY);
  const junior = tenant('team-a', 'second', 'good', LATE);
  expect(await proof.verdict(self(junior), [claimOf(senior)], policies(senior))).toMatchObject({
    kind: 'failed',
    error: { class: 'transient', reason: 'DatabaseInspectionFailed' },
  });
});

test('the identity a read showed puts two addresses on one server (an alias): roles conflict across them (ADR 0027)', async () => {
  const { nats, asked } = inspector();
  const proof = new ConflictProof({
    nats,
    secrets: reader,
    inspectTimeoutMs: 1000,
    inspectSealKey: keys.publicKey,
  });
  const senior = tenant('team-a', 'first', 'good', EARLY);
  const junior = tenant('team-a', 'second', 'good', LATE);
  const seniorClaim = claimOf(senior);
  // The senior reaches another database of the server under another host name.
  const aliased = { ...seniorClaim, claims: { ...seniorClaim.claims, databaseKey: '10.0.0.5:5432/other' } };
  proof.noteReached(senior.metadata.uid, seniorClaim.resolved, null);
  const unknown = await proof.verdict(self(junior), [aliased], policies(senior));
  expect(unknown).toEqual({ kind: 'verdict', verdict: { kind: 'clear' } });

  proof.noteReached(senior.metadata.uid, seniorClaim.resolved, '7712970052914542719');
  proof.noteReached(junior.metadata.uid, self(junior).connection, '7712970052914542719');
  for (let pass = 0; pass < 2; pass++) {
    const known = await proof.verdict(self(junior), [aliased], policies(senior));
    if (known.kind !== 'verdict' || known.verdict.kind !== 'conflict') throw new Error('expected a conflict');
    expect(known.verdict.message).toBe(
      'an earlier policy already manages these roles on the same PostgreSQL server (roles are server-wide): ' +
        'team-a/first (roles: app; schemas: -)',
    );
    // A fingerprint-only answer reads no identity: the one read before through the same connection stays.
    proof.noteReached(junior.metadata.uid, self(junior).connection);
  }
  // Another server behind the same identity-less address is told apart once read.
  proof.noteReached(junior.metadata.uid, self(junior).connection, '1');
  expect(await proof.verdict(self(junior), [aliased], policies(senior))).toEqual({
    kind: 'verdict',
    verdict: { kind: 'clear' },
  });
  expect(asked).toEqual([]);
});
