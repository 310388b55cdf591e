// The planner's election on an in-memory compare-and-swap store and an injected clock: expiry timed on the
// observer's clock, renewal failures ending the term before a standby may start, CAS conflicts, epochs,
// release, and a randomised model run in which two terms never overlap.
import { LeaseConflict, type LeaseEntry, type LeaseRecord, type LeaseStore } from '@rolepolicy/contracts';
import { Elector, timingProblem, type ElectionTiming, type LeaderTerm } from './elector.js';

const TIMING: ElectionTiming = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryMs: 2_000 };

/** A KV key with revisions; `down` makes every call fail, `slowMs` delays answers on the clock. */
class MemoryStore implements LeaseStore {
  entry: LeaseEntry | null = null;
  private revision = 0;
  down = false;
  writes = 0;

  async read(): Promise<LeaseEntry | null> {
    this.check();
    return this.entry;
  }

  async create(record: LeaseRecord): Promise<number> {
    this.check();
    if (this.entry !== null) throw new LeaseConflict('exists');
    return this.write(record);
  }

  async update(record: LeaseRecord, revision: number): Promise<number> {
    this.check();
    if (this.entry?.revision !== revision) throw new LeaseConflict('moved');
    return this.write(record);
  }

  private write(record: LeaseRecord): number {
    this.revision += 1;
    this.writes += 1;
    this.entry = { record, revision: this.revision };
    return this.revision;
  }

  private check(): void {
    if (this.down) throw new Error('nats: timeout');
  }
}

class Replica {
  readonly elector: Elector;
  readonly log: string[] = [];
  terms: LeaderTerm[] = [];

  constructor(
    readonly identity: string,
    store: LeaseStore,
    readonly clock: { now: number },
    timing = TIMING,
  ) {
    this.elector = new Elector({
      identity,
      store,
      timing,
      now: () => clock.now,
      onStartedLeading: (term) => {
        this.terms.push(term);
        this.log.push(`lead ${term.epoch}`);
      },
      onStoppedLeading: (term, why) => this.log.push(`stop ${term.epoch}: ${why}`),
    });
  }
}

function setup(): { store: MemoryStore; clock: { now: number }; a: Replica; b: Replica } {
  const store = new MemoryStore();
  const clock = { now: 0 };
  return { store, clock, a: new Replica('a', store, clock), b: new Replica('b', store, clock) };
}

test('unsafe timings are refused', () => {
  expect(timingProblem({ leaseDurationMs: 10, renewDeadlineMs: 10, retryMs: 1 })).toMatch(/renew deadline/);
  expect(timingProblem({ leaseDurationMs: 10, renewDeadlineMs: 5, retryMs: 5 })).toMatch(/retry period/);
  expect(timingProblem(TIMING)).toBeNull();
});

test('the first replica creates the lease at epoch 1; the second follows', async () => {
  const { store, a, b } = setup();
  await a.elector.tick();
  await b.elector.tick();
  expect(a.elector.term()).toEqual({ epoch: 1, identity: 'a' });
  expect(b.elector.isLeader()).toBe(false);
  expect(store.entry?.record).toEqual({ holder: 'a', epoch: 1, durationMs: 15_000 });
});

test('a concurrent create loses with a CAS conflict and leaves the winner alone', async () => {
  const { store, clock, a, b } = setup();
  // Both read "absent" before either writes.
  const read = store.read.bind(store);
  let reads = 0;
  store.read = async () => {
    const entry = await read();
    reads += 1;
    return reads <= 2 ? null : entry;
  };
  await Promise.all([a.elector.tick(), b.elector.tick()]);
  expect([a.elector.isLeader(), b.elector.isLeader()].filter(Boolean)).toHaveLength(1);
  clock.now = 2_000;
  await Promise.all([a.elector.tick(), b.elector.tick()]);
  expect([a.elector.isLeader(), b.elector.isLeader()].filter(Boolean)).toHaveLength(1);
  expect(store.entry?.record.epoch).toBe(1);
});

test('a standby takes over only after the record stood still for the lease duration on its own clock', async () => {
  const { store, clock, a, b } = setup();
  await a.elector.tick();
  clock.now = 1_000;
  await b.elector.tick(); // first sees revision 1 at t=1s
  // a dies (no more renewals). At t=15.9s the record has stood still 14.9s as b measures it.
  clock.now = 15_900;
  await b.elector.tick();
  expect(b.elector.isLeader()).toBe(false);
  clock.now = 16_000;
  await b.elector.tick();
  expect(b.elector.term()).toEqual({ epoch: 2, identity: 'b' });
  expect(store.entry?.record.holder).toBe('b');
});

test('renewals keep the standby waiting however long they go on', async () => {
  const { clock, a, b } = setup();
  for (let t = 0; t <= 60_000; t += 2_000) {
    clock.now = t;
    await a.elector.tick();
    await b.elector.tick();
  }
  expect(a.elector.isLeader()).toBe(true);
  expect(b.elector.isLeader()).toBe(false);
  expect(a.log).toEqual(['lead 1']);
});

test('a leader that cannot renew stops at the renew deadline, before the standby may start', async () => {
  const { store, clock, a, b } = setup();
  await a.elector.tick(); // renewed at t=0
  await b.elector.tick(); // b sees it at t=0
  store.down = true;
  clock.now = 9_999;
  await a.elector.tick();
  expect(a.elector.isLeader()).toBe(true);
  clock.now = 10_000;
  // No round needed: the term is judged on the clock whenever it is asked.
  expect(a.elector.isLeader()).toBe(false);
  expect(a.log).toEqual(['lead 1', 'stop 1: could not renew the lease before the renew deadline']);
  store.down = false;
  clock.now = 14_999;
  await b.elector.tick();
  expect(b.elector.isLeader()).toBe(false);
  clock.now = 15_000;
  await b.elector.tick();
  expect(b.elector.term()?.epoch).toBe(2);
});

test('a renewal that answers after the deadline does not revive the term', async () => {
  const { store, clock, a } = setup();
  await a.elector.tick();
  const update = store.update.bind(store);
  store.update = async (record, revision) => {
    clock.now = 12_000; // the store answered 12 s later
    return update(record, revision);
  };
  clock.now = 2_000;
  await a.elector.tick();
  expect(a.elector.isLeader()).toBe(false);
});

test('a leader whose record was overwritten steps down on the CAS conflict', async () => {
  const { store, clock, a } = setup();
  await a.elector.tick();
  store.entry = { record: { holder: 'x', epoch: 7, durationMs: 15_000 }, revision: 99 };
  clock.now = 2_000;
  await a.elector.tick();
  expect(a.elector.isLeader()).toBe(false);
  expect(a.log.at(-1)).toBe('stop 1: the lease was written by another replica');
});

test('each acquisition writes the handover point it read; renewals and release keep it', async () => {
  const store = new MemoryStore();
  const clock = { now: 0 };
  let seq = 40;
  const make = (identity: string): Elector =>
    new Elector({
      identity,
      store,
      timing: TIMING,
      now: () => clock.now,
      onStartedLeading: () => undefined,
      onStoppedLeading: () => undefined,
      handoverSeq: async () => seq,
    });
  const a = make('a');
  const b = make('b');
  await a.tick();
  expect(a.term()).toEqual({ epoch: 1, identity: 'a', handoverSeq: 40 });
  seq = 70;
  clock.now = 2_000;
  await a.tick();
  expect(store.entry?.record).toEqual({ holder: 'a', epoch: 1, durationMs: 15_000, handoverSeq: 40 });
  await a.release();
  expect(store.entry?.record).toEqual({ holder: '', epoch: 1, durationMs: 15_000, handoverSeq: 40 });
  await b.tick();
  expect(b.term()).toEqual({ epoch: 2, identity: 'b', handoverSeq: 70 });
});

test('a released lease is taken at once with the next epoch', async () => {
  const { store, clock, a, b } = setup();
  await a.elector.tick();
  await b.elector.tick();
  await a.elector.release();
  expect(a.elector.isLeader()).toBe(false);
  expect(store.entry?.record).toEqual({ holder: '', epoch: 1, durationMs: 15_000 });
  clock.now = 100;
  await b.elector.tick();
  expect(b.elector.term()?.epoch).toBe(2);
});

test('a paused leader (SIGSTOP) is no leader when it wakes, and its epoch is behind', async () => {
  const { clock, a, b } = setup();
  await a.elector.tick();
  await b.elector.tick();
  const before = a.elector.term();
  // a is stopped for 40 s: no timers run, b takes over after 15 s.
  for (let t = 2_000; t <= 40_000; t += 2_000) {
    clock.now = t;
    await b.elector.tick();
  }
  // a resumes: before any round, the clock alone ends its term; the fence refuses its in-flight commands.
  expect(a.elector.isLeader()).toBe(false);
  expect(b.elector.term()!.epoch).toBeGreaterThan(before!.epoch);
  clock.now = 42_000;
  await a.elector.tick();
  expect(a.elector.isLeader()).toBe(false);
});

test('model: random crashes, pauses, store outages and latencies never give two overlapping terms', async () => {
  let seed = 42;
  const random = (): number => {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  const store = new MemoryStore();
  const clock = { now: 0 };
  const replicas = ['a', 'b', 'c'].map((id) => new Replica(id, store, clock));
  const paused = new Map<Replica, number>();
  /** Intervals [start, end) in which a replica believed it led, per epoch. */
  const held: { epoch: number; who: string; from: number; to: number }[] = [];
  const open = new Map<Replica, { epoch: number; from: number }>();
  const observe = (): void => {
    expect(replicas.filter((r) => r.elector.isLeader()).length).toBeLessThanOrEqual(1);
    for (const r of replicas) {
      const term = r.elector.term();
      const current = open.get(r);
      if (current !== undefined && term?.epoch !== current.epoch) {
        held.push({ ...current, who: r.identity, to: clock.now });
        open.delete(r);
      }
      if (term !== undefined && !open.has(r)) open.set(r, { epoch: term.epoch, from: clock.now });
    }
  };
  for (let step = 0; step < 4_000; step++) {
    clock.now += Math.floor(random() * 1_500);
    store.down = random() < 0.1;
    const r = replicas[Math.floor(random() * replicas.length)]!;
    if ((paused.get(r) ?? 0) > clock.now) continue;
    if (random() < 0.01) paused.set(r, clock.now + 5_000 + random() * 30_000);
    observe();
    await r.elector.tick();
    observe();
  }
  for (const [r, current] of open) held.push({ ...current, who: r.identity, to: clock.now });
  held.sort((x, y) => x.from - y.from);
  for (let i = 1; i < held.length; i++) {
    expect(held[i]!.from).toBeGreaterThanOrEqual(held[i - 1]!.to);
    expect(held[i]!.epoch).toBeGreaterThan(held[i - 1]!.epoch);
  }
  expect(held.length).toBeGreaterThan(3);
});
