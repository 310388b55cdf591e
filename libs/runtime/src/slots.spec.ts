// Passes run a bounded number at a time, in arrival order, except that a due one takes the next free slot:
// hurried by its caller when it becomes urgent, or asked at each free slot. Against the slots that asked every
// waiter (test-support/polling-slots.ts) on random arrivals, urgencies and releases.
import fc from 'fast-check';
import { Slots, type SlotWaiter } from './slots.js';
import { gate } from './test-support/gate.js';
import { PollingSlots } from './test-support/polling-slots.js';

type Op =
  | { readonly kind: 'arrive' }
  | { readonly kind: 'urgent'; readonly pick: number }
  | { readonly kind: 'calm'; readonly pick: number }
  | { readonly kind: 'release'; readonly pick: number };

const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Runs `ops` on both slots and returns the order each started its tasks in. `hurry`: the new slots get no
 * predicate and are hurried when a waiter becomes urgent (the planner's use; urgency then never reverts
 * while waiting, so `calm` is skipped); otherwise both ask the same predicates (the access-scheduler's use).
 */
async function startOrders(size: number, ops: readonly Op[], hurry: boolean): Promise<[number[], number[]]> {
  const oracle = new PollingSlots(size);
  const slots = new Slots(size);
  const urgent = new Set<number>();
  const handles = new Map<number, SlotWaiter>();
  const started: [number[], number[]] = [[], []];
  const gates: ReturnType<typeof gate>[] = [];
  const runs: Promise<void>[] = [];
  const task = (side: 0 | 1, id: number) => async (): Promise<void> => {
    started[side].push(id);
    await gates[id]!.promise;
  };
  for (const op of ops) {
    const count = gates.length;
    if (op.kind === 'arrive') {
      const id = count;
      gates.push(gate());
      runs.push(oracle.run(task(0, id), () => urgent.has(id)));
      runs.push(slots.run(task(1, id), hurry ? undefined : () => urgent.has(id), (w) => handles.set(id, w)));
    } else if (count > 0 && op.kind === 'urgent') {
      urgent.add(op.pick % count);
      if (hurry) handles.get(op.pick % count)?.hurry();
    } else if (count > 0 && op.kind === 'calm' && !hurry) urgent.delete(op.pick % count);
    else if (count > 0 && op.kind === 'release') gates[op.pick % count]!.open();
    await settle();
  }
  for (const g of gates) g.open();
  await Promise.all(runs);
  return started;
}

describe('Slots', () => {
  it('never runs more than its size, and starts waiters in arrival order', async () => {
    const slots = new Slots(2);
    const gates = [gate(), gate(), gate(), gate()];
    let inside = 0;
    let most = 0;
    const started: number[] = [];
    const runs = gates.map((g, i) =>
      slots.run(async () => {
        started.push(i);
        inside++;
        most = Math.max(most, inside);
        await g.promise;
        inside--;
      }),
    );
    await Promise.resolve();
    expect(started).toEqual([0, 1]);
    expect(slots.queued).toBe(2);
    for (const g of gates) g.open();
    await Promise.all(runs);
    expect(started).toEqual([0, 1, 2, 3]);
    expect(most).toBe(2);
  });

  it('gives the next free slot to a waiter that is urgent by then, ahead of earlier ones', async () => {
    const slots = new Slots(1);
    const first = gate();
    const started: string[] = [];
    let due = false;
    const runs = [
      slots.run(async () => {
        started.push('running');
        await first.promise;
      }),
      slots.run(async () => void started.push('reconcile-a')),
      slots.run(async () => void started.push('reconcile-b')),
      slots.run(
        async () => void started.push('revoke'),
        () => due,
      ),
    ];
    await Promise.resolve();
    due = true; // the deadline passed while it waited
    first.open();
    await Promise.all(runs);
    expect(started).toEqual(['running', 'revoke', 'reconcile-a', 'reconcile-b']);
  });

  it('hurried waiters start in arrival order before the others, and a started one is not hurried again', async () => {
    const slots = new Slots(1);
    const first = gate();
    const started: string[] = [];
    const handles = new Map<string, SlotWaiter>();
    const blocker = slots.run(async () => {
      started.push('running');
      await first.promise;
    });
    const runs: Promise<void>[] = [];
    for (const name of ['a', 'b', 'c', 'd'])
      runs.push(
        slots.run(
          async () => void started.push(name),
          undefined,
          (w) => handles.set(name, w),
        ),
      );
    expect(slots.queued).toBe(4);
    handles.get('d')!.hurry();
    handles.get('b')!.hurry();
    first.open();
    await blocker;
    await Promise.all(runs);
    handles.get('b')!.hurry(); // started: nothing left to hurry
    expect(started).toEqual(['running', 'b', 'd', 'a', 'c']);
    expect(slots.queued).toBe(0);
  });

  // Arrivals and urgencies outnumber releases, so several urgent waiters often wait at once.
  const op: fc.Arbitrary<Op> = fc.oneof(
    { arbitrary: fc.constant({ kind: 'arrive' as const }), weight: 3 },
    { arbitrary: fc.record({ kind: fc.constant('urgent' as const), pick: fc.nat(20) }), weight: 3 },
    { arbitrary: fc.record({ kind: fc.constant('calm' as const), pick: fc.nat(20) }), weight: 1 },
    { arbitrary: fc.record({ kind: fc.constant('release' as const), pick: fc.nat(20) }), weight: 2 },
  );

  it('starts tasks in the order the polling slots did, hurried or polled', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 3 }),
        fc.array(op, { maxLength: 30 }),
        fc.boolean(),
        async (size, ops, hurry) => {
          const [oracle, slots] = await startOrders(size, ops, hurry);
          expect(slots).toEqual(oracle);
        },
      ),
      { numRuns: 200 },
    );
  });
});
