import type { NatsConnection } from '@nats-io/transport-node';
import type { K8sCommandV1, LeaseRecord } from '@rolepolicy/contracts';
import { FenceCheck } from './fence-check.js';

const command = (epoch: number): K8sCommandV1 =>
  ({
    v: 1,
    command: 'patch-status',
    target: { apiVersion: 'rolepolicy.io/v1alpha1', kind: 'PostgresPolicy', namespace: 'a', name: 'p' },
    status: {},
    idempotencyKey: `k-${epoch}`,
    fence: { lease: 'planner', epoch },
  }) as unknown as K8sCommandV1;

const lease = (epoch: number): LeaseRecord => ({ holder: `h${epoch}`, epoch, durationMs: 15_000 });

/** A lease store the test controls: a read answers (when the test says so) with the lease as it was when sent. */
function store(initial: LeaseRecord) {
  let current = initial;
  const waiting: (() => void)[] = [];
  let reads = 0;
  return {
    read: async () => {
      reads += 1;
      const seen = current;
      await new Promise<void>((resolve) => waiting.push(resolve));
      return seen;
    },
    set: (record: LeaseRecord) => (current = record),
    answerAll: async () => {
      for (const answer of waiting.splice(0)) answer();
      await new Promise((resolve) => setImmediate(resolve));
    },
    reads: () => reads,
  };
}

const nats = {} as NatsConnection;

describe('FenceCheck', () => {
  it('commands checked side by side share one lease read', async () => {
    const leases = store(lease(3));
    const check = new FenceCheck(nats, leases.read);
    const outcomes = Array.from({ length: 8 }, (_, i) => check.refusal(command(3), i + 1));
    await new Promise((resolve) => setImmediate(resolve));
    await leases.answerAll();
    expect(await Promise.all(outcomes)).toEqual(Array(8).fill(undefined));
    expect(leases.reads()).toBe(1);
  });

  it('a command received while a read is on its way waits for a read sent after it (a takeover is seen)', async () => {
    const leases = store(lease(3));
    const check = new FenceCheck(nats, leases.read);
    const early = check.refusal(command(3), 1);
    await new Promise((resolve) => setImmediate(resolve)); // the first read is sent
    leases.set({ ...lease(4), handoverSeq: 1 }); // a successor takes the lease
    const late = check.refusal(command(3), 2);
    await leases.answerAll(); // the first read: epoch 3, as it was when sent
    await leases.answerAll(); // the second read, sent after the late command arrived: epoch 4
    expect(await early).toBeUndefined();
    expect(await late).toEqual({ kind: 'fenced', lease: 'planner', epoch: 3, current: 4 });
    expect(leases.reads()).toBe(2);
  });

  it('a failed read leaves the command for redelivery and the next command reads again', async () => {
    let fail = true;
    let reads = 0;
    const check = new FenceCheck(nats, async () => {
      reads += 1;
      if (fail) throw new Error('timeout\nstack');
      return lease(2);
    });
    expect(await check.refusal(command(2), 1)).toEqual({
      kind: 'unavailable',
      message: 'leader lease planner not readable: timeout',
    });
    fail = false;
    expect(await check.refusal(command(2), 2)).toBeUndefined();
    expect(await check.refusal(command(1), 3)).toEqual({
      kind: 'fenced',
      lease: 'planner',
      epoch: 1,
      current: 2,
    });
    expect(reads).toBe(3);
  });

  it('commands without a fence read nothing', async () => {
    const leases = store(lease(1));
    const check = new FenceCheck(nats, leases.read);
    const { fence: _fence, ...unfenced } = command(1) as unknown as Record<string, unknown>;
    expect(await check.refusal(unfenced as unknown as K8sCommandV1, 1)).toBeUndefined();
    expect(leases.reads()).toBe(0);
  });
});
