// `npm run bench -- conflicts`: the planner's conflict check per pass (issue 28, "Scale"), pure code, no
// servers: PeerClaims + ConflictProof.verdict as a pass runs them, with 500 and 5,000 synthetic policies of
// the fleet's shape (one database each on one server, roles prefixed per policy, the same schema names in
// every database, every 25th policy sharing a role with its neighbour). The floor is the all-peers check
// (every peer's claims compared) in the same run -> bench/results/conflicts.json.
import type { NatsConnection } from '@nats-io/transport-node';
import type { SecretReader, SecretReadResult } from '@rolepolicy/contracts';
import type { SecretLike } from '@rolepolicy/kube';
import { API_VERSION, ClaimIndex, type PolicyClaims, type PostgresPolicy } from '@rolepolicy/plan-lifecycle';

import { ConflictProof } from '../apps/planner/src/reconcile/conflict-proof.js';
import { connectionDigest, type PeerClaim } from '../apps/planner/src/reconcile/connection-digest.js';
import { PeerClaims } from '../apps/planner/src/reconcile/peer-claims.js';
import { peerClaims } from '../apps/planner/src/planning/prepare.js';
import { smallPolicy } from './fleet-policy.js';
import { median, round, writeResult } from './pg-bench-support.js';

const SIZES = [500, 5_000];
const PASSES = 200;
const ROUNDS = 7;
const IDENTITY = '7412330000000000001';

const urlOf = (db: string) => `postgres://app:pw@db.example:5432/${db}`;

/** Policy `i`: its own database; every 25th shares its neighbour's role prefix (a conflict on a role). */
function fleetPolicy(i: number): PostgresPolicy {
  const prefix = i % 25 === 1 ? `t${i - 1}_` : `t${i}_`;
  return {
    apiVersion: API_VERSION,
    kind: 'PostgresPolicy',
    metadata: {
      namespace: 'fleet',
      name: `db-${i}`,
      uid: `uid-${i}`,
      generation: 1,
      resourceVersion: '1',
      creationTimestamp: new Date(Date.UTC(2026, 10, 1) + i * 1000).toISOString(),
    },
    spec: smallPolicy(prefix, `db_${i}`, `db-${i}`) as never,
  } as PostgresPolicy;
}

/** Answers every Secret read at once from memory (the gateway's answer, minus the trip). */
const reader: SecretReader = {
  read: async (_namespace, names): Promise<SecretReadResult> =>
    ({
      secrets: new Map(
        names.map((n): [string, SecretLike] => [
          n,
          {
            metadata: { resourceVersion: '1' },
            stringData: { DATABASE_URL: urlOf(n.replace('db-', 'db_')) },
          },
        ]),
      ),
    }) as unknown as SecretReadResult,
};

interface Fleet {
  readonly policies: readonly PostgresPolicy[];
  readonly selves: readonly { policy: PostgresPolicy; claims: PolicyClaims; connection: never }[];
  readonly peers: PeerClaims;
  readonly proof: ConflictProof;
  readonly index: ClaimIndex<PeerClaim>;
  readonly all: readonly PeerClaim[];
}

/** A fleet whose peers were all read once and all reached their server (a planner past the first passes). */
async function fleetOf(size: number): Promise<Fleet> {
  const policies = Array.from({ length: size }, (_, i) => fleetPolicy(i));
  // Every claim is proven, so no proof is asked and the NATS connection is never used.
  const proof = new ConflictProof({
    nats: undefined as unknown as NatsConnection,
    secrets: reader,
    inspectTimeoutMs: 1000,
    inspectSealKey: '',
  });
  const selves = policies.map((policy) => {
    const name = policy.metadata.name;
    const lookup = () => ({
      metadata: { resourceVersion: '1' },
      stringData: { DATABASE_URL: urlOf(name.replace('db-', 'db_')) },
    });
    const resolved = peerClaims(policy, lookup as never)!;
    proof.noteReached(policy.metadata.uid, resolved.connection, IDENTITY);
    return { policy, claims: resolved.claims, connection: resolved.connection as never };
  });
  const byKey = new Map(policies.map((p) => [`${p.metadata.namespace}/${p.metadata.name}`, p]));
  const peers = new PeerClaims({ reader, policyAt: (key) => byKey.get(key) ?? null, versionOf: () => '1' });
  for (const key of byKey.keys()) peers.policyChanged(key); // as the planner's start does
  await peers.overlapping({ ...selves[0]!.claims, uid: '' }); // every peer read once
  const all = selves.map((s) => ({ claims: s.claims, connection: connectionDigest(s.connection) }));
  const index = new ClaimIndex<PeerClaim>();
  for (const claim of all) index.set(claim.claims, claim);
  return { policies, selves, peers, proof, index, all };
}

type Check = (fleet: Fleet, self: Fleet['selves'][number]) => Promise<unknown>;

/** The pass as the reconciler runs it: the marked peers checked (none here), the candidates, the verdict. */
const indexed: Check = async (fleet, self) => {
  const claims = await fleet.peers.overlapping(self.claims);
  return fleet.proof.verdict(self, claims, (c) => fleet.peers.policyOf(c));
};

/**
 * The comparison alone, over an index of the peers' claims (no peer list, no freshness check): what grows
 * with the peers that can overlap, not with the fleet.
 */
const compareOnly: Check = async (fleet, self) =>
  fleet.proof.verdict(self, fleet.index.candidates(self.claims), (c) => fleet.peers.policyOf(c));

/** The floor: every peer's claims compared. */
const allPeers: Check = async (fleet, self) => {
  const claims = fleet.all.filter((c) => c.claims.uid !== self.claims.uid);
  return fleet.proof.verdict(self, claims, (c) => fleet.peers.policyOf(c));
};

/** CPU microseconds per pass of `check` over PASSES policies spread across the fleet. */
async function cpuPerPass(fleet: Fleet, check: Check): Promise<number> {
  const step = Math.max(1, Math.floor(fleet.selves.length / PASSES));
  const start = process.cpuUsage();
  for (let i = 0; i < PASSES; i++) await check(fleet, fleet.selves[(i * step) % fleet.selves.length]!);
  const used = process.cpuUsage(start);
  return (used.user + used.system) / PASSES;
}

const VARIANTS: Readonly<Record<string, Check>> = { indexed, compareOnly, allPeers };

/** Prints and writes the figures. */
export async function runConflictsBench(): Promise<void> {
  const sizes: Record<string, Record<string, number>> = {};
  for (const size of SIZES) {
    const fleet = await fleetOf(size);
    // Same verdicts (the bench's own check that it measures equal work).
    let conflicts = 0;
    for (const self of fleet.selves) {
      const [a, b, c] = [
        JSON.stringify(await indexed(fleet, self)),
        JSON.stringify(await compareOnly(fleet, self)),
        JSON.stringify(await allPeers(fleet, self)),
      ];
      if (a !== c || b !== c) throw new Error(`verdicts differ for ${self.claims.name}`);
      if (a.includes('"conflict"')) conflicts++;
    }
    const samples = new Map(Object.keys(VARIANTS).map((k) => [k, [] as number[]]));
    for (let r = 0; r <= ROUNDS; r++) {
      for (const [name, check] of Object.entries(VARIANTS)) {
        const us = await cpuPerPass(fleet, check);
        if (r > 0) samples.get(name)!.push(us);
      }
    }
    const figures = Object.fromEntries([...samples].map(([k, v]) => [`${k}Us`, round(median(v))]));
    sizes[size] = { ...figures, conflicts };
    console.log(`${size} policies (${conflicts} conflicts), CPU us per pass: ${JSON.stringify(figures)}`);
  }
  const [small, large] = SIZES.map((s) => sizes[s]!) as [Record<string, number>, Record<string, number>];
  const ratio = Object.fromEntries(
    Object.keys(VARIANTS).map((k) => [k, round(large[`${k}Us`]! / small[`${k}Us`]!)]),
  );
  console.log(`per pass, ${SIZES[1]}/${SIZES[0]}: ${JSON.stringify(ratio)}`);
  writeResult('conflicts', {
    measured: new Date().toISOString(),
    what:
      'CPU microseconds per conflict check of one pass, median of rounds. indexed: the pass as the planner ' +
      'runs it (PeerClaims.overlapping: marked peers checked, candidates; ConflictProof.verdict over ' +
      'them); compareOnly: the index lookup and the verdict alone; allPeers: the floor, every peer ' +
      'compared (ConflictProof.verdict over all claims)',
    passes: PASSES,
    rounds: ROUNDS,
    sizes,
    ratio5000to500: ratio,
  });
}
