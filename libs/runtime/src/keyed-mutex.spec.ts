// Work of one key runs one after another in arrival order (urgent first); other keys are not held up.
import { KeyedMutex } from './keyed-mutex.js';
import { gate } from './test-support/gate.js';

describe('KeyedMutex', () => {
  it('runs work of one key one at a time, in arrival order', async () => {
    const mutex = new KeyedMutex();
    const log: string[] = [];
    let inside = 0;
    let maxInside = 0;
    const gates = [gate(), gate(), gate()];
    const runs = gates.map((gate, i) =>
      mutex.run('db', async () => {
        inside++;
        maxInside = Math.max(maxInside, inside);
        log.push(`start ${i}`);
        await gate.promise;
        log.push(`end ${i}`);
        inside--;
      }),
    );
    await Promise.resolve();
    gates[2]!.open();
    gates[1]!.open();
    gates[0]!.open();
    await Promise.all(runs);
    expect(log).toEqual(['start 0', 'end 0', 'start 1', 'end 1', 'start 2', 'end 2']);
    expect(maxInside).toBe(1);
    expect(mutex.busyKeys).toBe(0);
  });

  it('does not hold up another key', async () => {
    const mutex = new KeyedMutex();
    const slow = gate();
    const first = mutex.run('a', () => slow.promise);
    let otherRan = false;
    await mutex.run('b', async () => {
      otherRan = true;
    });
    expect(otherRan).toBe(true);
    slow.open();
    await first;
  });

  it('releases the key when the work throws, and reports the time queued', async () => {
    const mutex = new KeyedMutex();
    await expect(mutex.run('a', () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    const waits: number[] = [];
    await expect(
      mutex.run(
        'a',
        () => Promise.resolve(7),
        (ms) => waits.push(ms),
      ),
    ).resolves.toBe(7);
    expect(waits).toHaveLength(1);
    expect(waits[0]).toBeGreaterThanOrEqual(0);
    expect(mutex.busyKeys).toBe(0);
  });
});

describe('KeyedMutex with urgent work', () => {
  it('runs urgent work ahead of the non-urgent waiters, after the running one and earlier urgent work', async () => {
    const mutex = new KeyedMutex();
    const log: string[] = [];
    const running = gate();
    const step = (name: string, gate?: Promise<void>) => async () => {
      log.push(`start ${name}`);
      await gate;
      log.push(`end ${name}`);
    };
    const runs = [
      mutex.run('db', step('activate-0', running.promise)),
      mutex.run('db', step('activate-1')),
      mutex.run('db', step('activate-2')),
      mutex.run('db', step('revoke-0'), undefined, true),
      mutex.run('db', step('revoke-1'), undefined, true),
      mutex.run('other', step('elsewhere')),
    ];
    await Promise.resolve();
    running.open();
    await Promise.all(runs);
    expect(log.filter((l) => l.startsWith('start') && !l.includes('elsewhere'))).toEqual([
      'start activate-0',
      'start revoke-0',
      'start revoke-1',
      'start activate-1',
      'start activate-2',
    ]);
    expect(log.indexOf('start elsewhere')).toBeLessThan(log.indexOf('end activate-0'));
    expect(mutex.busyKeys).toBe(0);
  });
});
