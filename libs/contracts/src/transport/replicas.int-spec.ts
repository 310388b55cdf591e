// Two replicas (real child processes) bound to one durable pull consumer: they split the work, nothing is
// lost or handled twice at once, and a replica killed before its ack hands the message to the other one.
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstream } from '@nats-io/jetstream';
import { createNatsSandbox, freePort, spawnTs, type NatsSandbox } from '@rolepolicy/testing';
import { encodePayload } from '../contract.js';
import { workContract, type Delivery, type WorkTopologyNames, type WorkV1 } from './test-support/work.js';

const WORKER = path.join(path.dirname(fileURLToPath(import.meta.url)), 'test-support', 'replica-worker.ts');

type Line =
  | { readonly pid: number; readonly event: 'ready' }
  | ({ readonly pid: number; readonly event: 'delivery' } & Delivery);

async function eventually<T>(probe: () => T | undefined, what: string, timeoutMs = 45_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('replicas of one durable consumer', () => {
  let sandbox: NatsSandbox;
  let nc: NatsConnection;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    sandbox = await createNatsSandbox();
    nc = await connect({ servers: sandbox.url });
  }, 30_000);

  afterEach(() => {
    for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  });

  afterAll(async () => {
    await nc?.close();
    await sandbox?.cleanup();
  });

  /** Starts two replicas on fresh names and resolves once both pull. */
  async function startReplicas(
    label: string,
    ackWaitMs: number,
  ): Promise<{ names: WorkTopologyNames; lines: Line[]; pids: number[] }> {
    const names: WorkTopologyNames = {
      root: sandbox.subject(label),
      workStream: sandbox.stream(`${label}_work`),
      deadStream: sandbox.stream(`${label}_dead`),
      durable: sandbox.durable(label),
      ackWaitMs,
      maxDeliver: 5,
    };
    const lines: Line[] = [];
    for (let i = 0; i < 2; i++) {
      const child = spawnTs(WORKER, {
        env: {
          RP_TEST_WORK_NAMES: JSON.stringify(names),
          NATS_URL: sandbox.url,
          HTTP_HOST: '127.0.0.1',
          HTTP_PORT: String(await freePort()),
        },
        onLine: (line) => {
          if (line.startsWith('{')) lines.push(JSON.parse(line) as Line);
        },
      });
      children.push(child);
    }
    const pids = await eventually(() => {
      const ready = lines.filter((l) => l.event === 'ready').map((l) => l.pid);
      return ready.length === 2 ? ready : undefined;
    }, 'both replicas ready');
    return { names, lines, pids };
  }

  async function publish(names: WorkTopologyNames, work: WorkV1): Promise<void> {
    await jetstream(nc).publish(
      `${names.root}.work.${work.id}`,
      encodePayload(workContract(names.root), work),
    );
  }

  it('two replicas split 100 messages with none lost and none handled twice concurrently', async () => {
    const { names, lines, pids } = await startReplicas('split', 30_000);
    const ids = Array.from({ length: 100 }, (_, i) => `m${i}`);
    for (const id of ids) await publish(names, { v: 1, id, behaviour: 'ok', delayMs: 5 });

    const deliveries = () =>
      lines.filter((l): l is Extract<Line, { event: 'delivery' }> => l.event === 'delivery');
    await eventually(
      () => (deliveries().filter((d) => d.phase === 'done').length >= 100 ? true : undefined),
      '100 messages handled',
    );

    const done = deliveries().filter((d) => d.phase === 'done');
    // None lost: every id completed; none handled twice: each completed exactly once.
    expect(new Set(done.map((d) => d.id))).toEqual(new Set(ids));
    expect(done).toHaveLength(100);
    // Never concurrently: between a start and its done, no other start of the same id.
    const inFlight = new Set<string>();
    for (const d of deliveries()) {
      if (d.phase === 'start') {
        expect(inFlight.has(d.id)).toBe(false);
        inFlight.add(d.id);
      } else inFlight.delete(d.id);
    }
    // Both replicas took a share of the work.
    for (const pid of pids) expect(done.filter((d) => d.pid === pid).length).toBeGreaterThan(0);
  }, 90_000);

  it('a replica killed before its ack gets the message redelivered to the other replica', async () => {
    const { names, lines } = await startReplicas('kill', 2_000);
    await publish(names, { v: 1, id: 'job', behaviour: 'hang_first' });

    const first = await eventually(
      () =>
        lines.find(
          (l): l is Extract<Line, { event: 'delivery' }> => l.event === 'delivery' && l.phase === 'start',
        ),
      'first delivery',
    );
    const victim = children.find((c) => c.pid === first.pid);
    victim?.kill('SIGKILL');

    const done = await eventually(
      () =>
        lines.find(
          (l): l is Extract<Line, { event: 'delivery' }> => l.event === 'delivery' && l.phase === 'done',
        ),
      'redelivery to the surviving replica',
    );
    expect(done.pid).not.toBe(first.pid);
    expect(done.deliveryCount).toBe(2);
  }, 90_000);
});
