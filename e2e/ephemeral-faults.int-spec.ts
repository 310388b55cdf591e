// End to end, revocation survives the faults issue 13 names: the access-scheduler killed (SIGKILL, no
// cleanup) while access is active, Redis flushed, Redis down across the deadline, NATS restarted. In each
// the membership is revoked, and the lag after the fault clears is bounded by what the configuration
// promises: one rebuild interval (ACCESS_SCHEDULER_REBUILD_INTERVAL_MS) plus the work of one revocation.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ChildProcess } from 'node:child_process';
import type { EphemeralAccessRequest } from '@rolepolicy/kube';
import { freePort, spawnTs, startPrivateRedis, type PrivateRedis } from '@rolepolicy/testing';
import { sleep, startStack, waitFor, type Stack, type TargetDatabase } from './stack.js';
import { EphemeralResources } from './support/ephemeral.js';

const REBUILD_MS = 2_000;
/** One revocation's own work (status writes through the gateway, the executor's transaction, timestamps at 1 s). */
const WORK_MS = 5_000;
/** A NATS client's reconnect after the server is back (nats.js waits 2 s between attempts). */
const RECONNECT_MS = 5_000;
const PREFIX = 'rp-e2e-eph-faults';
const MAIN = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../apps/access-scheduler/src/main.ts',
);

let stack: Stack;
let redis: PrivateRedis;
let db: TargetDatabase;
let eph: EphemeralResources;
let reader: string;
let alice: string;

beforeAll(async () => {
  redis = await startPrivateRedis();
  stack = await startStack({
    env: {
      REDIS_URL: redis.url,
      ACCESS_SCHEDULER_REDIS_PREFIX: PREFIX,
      ACCESS_SCHEDULER_REBUILD_INTERVAL_MS: String(REBUILD_MS),
    },
  });
  db = await stack.createDatabase('ephfaults');
  eph = new EphemeralResources(stack.kubeConfig, stack.namespace);
  [reader, alice] = [stack.role('reader'), stack.role('alice')];
  await stack.resources.createPolicy('orders', {
    connection: db.connection,
    mode: 'apply',
    approval: 'auto',
    roles: [
      { name: reader, login: false },
      { name: alice, login: true },
    ],
  });
  await stack.reconciled('orders');
  await eph.create('EphemeralAccessPolicy', 'auto', {
    approval: { mode: 'Automatic' },
    justification: { required: false },
    maximumDuration: '1h',
    defaultDuration: '8s',
    memberships: [{ role: reader, inherit: true }],
    postgresPolicyRef: { name: 'orders' },
  });
}, 60_000);

afterAll(async () => {
  await stack?.stop();
  await redis?.stop();
});

async function isMember(): Promise<boolean> {
  const rows = await db.sql(
    `SELECT 1 FROM pg_auth_members m JOIN pg_roles r ON r.oid = m.roleid JOIN pg_roles u ON u.oid = m.member
      WHERE r.rolname = $1 AND u.rolname = $2`,
    [reader, alice],
  );
  return rows.length === 1;
}

async function activate(name: string): Promise<EphemeralAccessRequest> {
  await eph.create('EphemeralAccessRequest', name, {
    accessPolicyRef: { name: 'auto' },
    subject: { role: alice },
    requestedBy: { username: 'alice@example.com' },
  });
  const active = await eph.phase(name, 'Active');
  expect(await isMember()).toBe(true);
  return active;
}

/** Waits for Ended; returns the revocation lag counted from `from` (the later of expiresAt and the fault's end). */
async function endedLag(name: string, from: number): Promise<number> {
  const ended = await eph.phase(name, 'Ended', 60_000);
  expect(await isMember()).toBe(false);
  return Date.parse(ended.status!.endedAt!) - from;
}

const expiresAt = (r: EphemeralAccessRequest): number => Date.parse(r.status!.expiresAt!);

async function untilPast(ms: number): Promise<void> {
  const wait = ms - Date.now();
  if (wait > 0) await sleep(wait);
}

test('the scheduler killed (SIGKILL) while access is active: a new one revokes within one rebuild interval', async () => {
  await stack.stopServices(['access-scheduler']);
  const port = await freePort();
  const child: ChildProcess = spawnTs(MAIN, {
    env: {
      NATS_URL: stack.nats.url,
      HTTP_HOST: '127.0.0.1',
      HTTP_PORT: String(port),
      LOG_LEVEL: 'error',
      REDIS_URL: redis.url,
      ACCESS_SCHEDULER_REDIS_PREFIX: PREFIX,
      ACCESS_SCHEDULER_REBUILD_INTERVAL_MS: String(REBUILD_MS),
    },
  });
  try {
    await waitFor('the child scheduler ready', async () => {
      const res = await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined);
      return res?.status === 200;
    });
    const active = await activate('killed');
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
    // Dead across the deadline: nothing can revoke until a scheduler runs again.
    await untilPast(expiresAt(active) + 2_000);
    expect(await isMember()).toBe(true);
    const restartedAt = Date.now();
    await stack.startServices(['access-scheduler']);
    expect(await endedLag('killed', restartedAt)).toBeLessThanOrEqual(REBUILD_MS + WORK_MS);
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
  }
}, 90_000);

test('Redis FLUSHALL while access is active: revoked within one rebuild interval of the deadline', async () => {
  const active = await activate('flushed');
  await redis.flushAll();
  expect(await endedLag('flushed', expiresAt(active))).toBeLessThanOrEqual(REBUILD_MS + WORK_MS);
}, 60_000);

test('Redis down across the deadline: revoked by the rebuild pass without any timer', async () => {
  const active = await activate('no-redis');
  await redis.stop();
  try {
    expect(await endedLag('no-redis', expiresAt(active))).toBeLessThanOrEqual(REBUILD_MS + WORK_MS);
  } finally {
    await redis.start();
  }
}, 60_000);

test('NATS restarted across the deadline: revoked within reconnect plus one rebuild interval of its return', async () => {
  const active = await activate('nats-restart');
  await stack.nats.stop();
  await untilPast(expiresAt(active) + 1_000);
  const backAt = Date.now();
  await stack.nats.start();
  expect(await endedLag('nats-restart', backAt)).toBeLessThanOrEqual(RECONNECT_MS + REBUILD_MS + WORK_MS);
}, 90_000);
