// Passes run a bounded number at a time, in arrival order, except that a due one takes the next free slot.
import { Slots } from './slots.js';
import { gate } from './test-support/gate.js';

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
});
