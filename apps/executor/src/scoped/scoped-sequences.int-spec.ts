// What a scoped execution request costs the resource stream, on real NATS and PostgreSQL: the JetStream API
// requests the executor sends about RP_RESOURCES per Activate and per Revoke (seen by a plain subscriber on
// `$JS.API.>`, nothing stubbed), with and without the sequences the access-scheduler had seen
// (`resourceSequences`, ADR 0030 amended), and a change stored after what the scheduler saw, while the
// execution waits for the database lock, still stopping it.
import type { INestApplication } from '@nestjs/common';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import pg from 'pg';
import { targetOfUrl } from '@rolepolicy/catalog';
import { ensureTopology, ResourceCache, type ScopedExecuteResultV1 } from '@rolepolicy/contracts';
import { logicalFingerprint } from '@rolepolicy/policy';
import {
  createNatsSandbox,
  createPostgresSandbox,
  eventually,
  sandboxId,
  type NatsSandbox,
  type PostgresSandbox,
} from '@rolepolicy/testing';
import { scopedSeenBy } from '../../../access-scheduler/src/scheduler/scoped-requests.js';
import { ApiTraffic } from '../execution/test-support/api-traffic.js';
import {
  clusterNames,
  ensureClusterStreams,
  publishObject,
  type ClusterNames,
} from '../execution/test-support/cluster.js';
import { executorTopology, type ExecutorTopology } from '../execution/test-support/harness.js';
import {
  collectScopedResults,
  publishRequest,
  publishTarget,
  scopedMessage,
  sendScoped,
  startScopedExecutor,
  type HeldRequest,
  type TargetPolicy,
} from './test-support/scoped-cluster.js';

const NS = 'team-q';
const run = sandboxId();
const LABELS = ['act_old', 'act_seen', 'rev_old', 'rev_seen', 'recreated'] as const;
type Label = (typeof LABELS)[number];
const subjectOf = (label: Label): string => `rpq_${run}_${label}_s`;
const roleOf = (label: Label): string => `rpq_${run}_${label}_r`;

describe('scoped execution requests and the resource stream: what the access-scheduler saw, waited for locally', () => {
  let sandbox: NatsSandbox;
  let nc: NatsConnection;
  let watcher: NatsConnection;
  let topology: ExecutorTopology;
  let names: ClusterNames;
  let db: PostgresSandbox;
  let admin: pg.Client;
  let target: TargetPolicy;
  let results: ScopedExecuteResultV1[];
  let stopResults: () => void = () => undefined;
  let traffic: ApiTraffic;
  /** The access-scheduler's side: a cache of the kinds the executor verifies against, on the same stream. */
  let scheduler: ResourceCache;
  let app: INestApplication | undefined;

  const resultOf = (held: HeldRequest, operation: 'Activate' | 'Revoke'): Promise<ScopedExecuteResultV1> =>
    eventually(
      `${operation} result of ${held.name}`,
      () => results.find((r) => r.request.uid === held.uid && r.operation === operation),
      30_000,
    );

  const member = async (label: Label): Promise<boolean> => {
    const { rows } = await admin.query(
      `SELECT 1 FROM pg_catalog.pg_auth_members am JOIN pg_catalog.pg_roles r ON r.oid = am.roleid
        JOIN pg_catalog.pg_roles m ON m.oid = am.member WHERE r.rolname = $1 AND m.rolname = $2`,
      [roleOf(label), subjectOf(label)],
    );
    return rows.length > 0;
  };

  /** The request of `label` as the scheduler leaves it before it sends (the subject holding the role: Revoking). */
  const held = (label: Label, phase: 'Applying' | 'Revoking'): Promise<HeldRequest> =>
    publishRequest(
      nc,
      names,
      target,
      { name: label.replace('_', '-'), subject: subjectOf(label), role: roleOf(label) },
      phase,
    );

  beforeAll(async () => {
    sandbox = await createNatsSandbox();
    nc = await connect({ servers: sandbox.url });
    watcher = await connect({ servers: sandbox.url });
    topology = executorTopology(sandbox);
    names = clusterNames(sandbox, topology);
    await ensureClusterStreams(nc, names);
    await ensureTopology(await jetstreamManager(nc), { streams: topology.topology.streams, consumers: [] });
    traffic = new ApiTraffic(watcher, names.resources.name, topology.stream);
    ({ results, stop: stopResults } = await collectScopedResults(nc, topology, sandbox.durable('results')));
    db = await createPostgresSandbox('scoped_seq');
    admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
    for (const label of LABELS) {
      await admin.query(`CREATE ROLE "${subjectOf(label)}" LOGIN; CREATE ROLE "${roleOf(label)}"`);
      if (label.startsWith('rev')) await admin.query(`GRANT "${roleOf(label)}" TO "${subjectOf(label)}"`);
    }
    const { host, port, database } = targetOfUrl(db.url);
    target = {
      namespace: NS,
      name: 'orders',
      uid: `uid-${run}-orders`,
      fingerprint: logicalFingerprint(host, port, database),
    };
    await publishTarget(
      nc,
      names,
      target,
      db.url,
      LABELS.flatMap((label) => [subjectOf(label), roleOf(label)]),
      LABELS.map(roleOf),
    );
    scheduler = await ResourceCache.start(nc, {
      kinds: ['postgrespolicy', 'postgrespolicyplan', 'ephemeralaccessrequest', 'ephemeralaccesspolicy'],
      stream: names.resources.name,
      subjectRoot: names.root,
    });
    await scheduler.ready;
    app = await startScopedExecutor(topology, names, sandbox.url, {});
  }, 120_000);

  afterAll(async () => {
    await app?.close().catch(() => undefined);
    traffic?.stop();
    await scheduler?.stop();
    stopResults();
    // Roles are the server's: dropped before the database goes.
    for (const label of LABELS) {
      await admin?.query(`DROP ROLE IF EXISTS "${subjectOf(label)}"`).catch(() => undefined);
      await admin?.query(`DROP ROLE IF EXISTS "${roleOf(label)}"`).catch(() => undefined);
    }
    await admin?.end().catch(() => undefined);
    await db?.drop().catch(() => undefined);
    await watcher?.close();
    await nc?.close();
    await sandbox?.cleanup();
  }, 120_000);

  it('JetStream API requests about the resource stream per scoped execution: an Activate syncs once with the sequences, twice without; a Revoke once', async () => {
    const counts: Record<string, ReturnType<ApiTraffic['since']>> = {};
    for (const [label, operation, carry] of [
      ['act_old', 'Activate', false],
      ['act_seen', 'Activate', true],
      ['rev_old', 'Revoke', false],
      ['rev_seen', 'Revoke', true],
    ] as const) {
      const request = await held(label, operation === 'Activate' ? 'Applying' : 'Revoking');
      await scheduler.sync();
      // Quiet first: the executor's cache has applied everything (no catching up inside the window).
      await eventually('the executor caught up', async () => {
        const before = traffic.api.length;
        await new Promise((resolve) => setTimeout(resolve, 300));
        return traffic.api.length === before ? true : undefined;
      });
      const from = traffic.api.length;
      const message = scopedMessage(request, operation);
      await sendScoped(
        nc,
        topology,
        carry ? { ...message, resourceSequences: scopedSeenBy(scheduler) } : message,
      );
      const granted = operation === 'Activate' ? 'MembershipsGranted' : 'MembershipsRevoked';
      expect(await resultOf(request, operation)).toMatchObject({ outcome: 'Applied', reason: granted });
      counts[`${label}`] = traffic.since(from);
      expect(await member(label)).toBe(operation === 'Activate');
    }
    // The figures docs/ephemeral-access.md and docs/executor.md quote.
    console.log(`JetStream API requests about RP_RESOURCES per scoped execution: ${JSON.stringify(counts)}`);
    expect(counts['act_old']?.streamInfo).toBe(2);
    expect(counts['act_seen']?.streamInfo).toBe(1);
    expect(counts['act_seen']!.total).toBeLessThan(counts['act_old']!.total);
    // A Revoke's read before the lock already asked nothing; the read under the lock syncs, with or without.
    expect(counts['rev_old']?.streamInfo).toBe(1);
    expect(counts['rev_seen']?.streamInfo).toBe(1);
  }, 120_000);

  it('a request recreated after what the scheduler saw, while the Activate waits for the database lock, stops it', async () => {
    const request = await held('recreated', 'Applying');
    await scheduler.sync();
    const seen = scopedSeenBy(scheduler);
    // The target database's lock, as a policy execution of it would hold it.
    const holder = new pg.Client({ connectionString: db.url });
    await holder.connect();
    try {
      await holder.query(
        `SELECT pg_catalog.pg_advisory_lock(pg_catalog.hashtextextended('rolepolicy:' || pg_catalog.current_database(), 0))`,
      );
      await sendScoped(nc, topology, { ...scopedMessage(request, 'Activate'), resourceSequences: seen });
      await eventually(
        'the Activate waiting for the database lock',
        async () => {
          const { rows } = await admin.query<{ waits: number }>(
            `SELECT count(*)::int AS waits FROM pg_catalog.pg_locks WHERE locktype = 'advisory' AND NOT granted`,
          );
          return rows[0]!.waits > 0 ? true : undefined;
        },
        20_000,
      );
      // Deleted and created again under the same name: stored after the sequences the request carries.
      await publishObject(nc, names, 'ephemeralaccessrequest', {
        apiVersion: 'rolepolicy.io/v1alpha1',
        kind: 'EphemeralAccessRequest',
        metadata: { name: request.name, namespace: NS, uid: `${request.uid}-again` },
        spec: {
          accessPolicyRef: { name: `${target.name}-access` },
          subject: { role: subjectOf('recreated') },
          requestedBy: { username: 'alice@example.com' },
        },
      });
    } finally {
      await holder.end();
    }
    expect(await resultOf(request, 'Activate')).toMatchObject({
      outcome: 'Failed',
      reason: 'RequestRecreated',
      statements: [],
    });
    expect(await member('recreated')).toBe(false);
  }, 60_000);
});
