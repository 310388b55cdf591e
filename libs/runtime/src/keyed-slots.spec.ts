// Executions per PostgreSQL server: at most `size` of one server at once, other servers never held up.
import { KeyedSlots } from './keyed-slots.js';
import { gate } from './test-support/gate.js';

describe('KeyedSlots', () => {
  it('runs at most `size` tasks of one key at once, in arrival order, and never holds up another key', async () => {
    const slots = new KeyedSlots(2);
    const gates = Array.from({ length: 5 }, () => gate());
    const inside = new Map<string, number>();
    const most = new Map<string, number>();
    const started: string[] = [];
    const task = (key: string, i: number) =>
      slots.run(key, async () => {
        started.push(`${key}${i}`);
        inside.set(key, (inside.get(key) ?? 0) + 1);
        most.set(key, Math.max(most.get(key) ?? 0, inside.get(key)!));
        await gates[i]!.promise;
        inside.set(key, inside.get(key)! - 1);
      });
    const runs = [task('a', 0), task('a', 1), task('a', 2), task('a', 3), task('b', 4)];
    await Promise.resolve();
    // Server b starts at once although a is full.
    expect(started).toEqual(['a0', 'a1', 'b4']);
    expect(slots.queued('a')).toBe(2);
    gates[1]!.open();
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toEqual(['a0', 'a1', 'b4', 'a2']);
    for (const g of gates) g.open();
    await Promise.all(runs);
    expect(started).toEqual(['a0', 'a1', 'b4', 'a2', 'a3']);
    expect(most.get('a')).toBe(2);
    expect(most.get('b')).toBe(1);
    // Nothing is kept for keys without tasks.
    expect(slots.keys).toBe(0);
  });

  it('frees the slot of a task that throws', async () => {
    const slots = new KeyedSlots(1);
    await expect(slots.run('a', () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(slots.run('a', () => Promise.resolve('next'))).resolves.toBe('next');
    expect(slots.keys).toBe(0);
  });

  it('hands out a slot to hold until released, in the same count as run', async () => {
    const slots = new KeyedSlots(1);
    const first = await slots.acquire('a');
    let second = false;
    const waiting = slots.acquire('a').then((release) => {
      second = true;
      return release;
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(second).toBe(false);
    expect(slots.queued('a')).toBe(1);
    first();
    first(); // a second call gives back nothing more
    (await waiting)();
    expect(second).toBe(true);
    await new Promise((resolve) => setImmediate(resolve));
    expect(slots.keys).toBe(0);
  });

  it('starts an urgent waiter of a key before the others waiting, never before a running task', async () => {
    const slots = new KeyedSlots(1);
    const running = gate();
    const started: string[] = [];
    const task = (name: string, urgent: boolean, until?: Promise<void>) =>
      slots.run(
        'a',
        async () => {
          started.push(name);
          await until;
        },
        urgent,
      );
    const runs = [task('sweep', false, running.promise), task('activate', false), task('revoke', true)];
    await Promise.resolve();
    expect(started).toEqual(['sweep']);
    running.open();
    await Promise.all(runs);
    expect(started).toEqual(['sweep', 'revoke', 'activate']);
  });
});
