// KeyedQueue: one run per key at a time, and a burst of requests merged into one follow-up run.
import { KeyedQueue } from './keyed-queue.js';

describe('KeyedQueue', () => {
  it('merges requests made before a queued pass starts into that pass', async () => {
    const queue = new KeyedQueue(() => undefined);
    let runs = 0;
    for (let i = 0; i < 3; i++) void queue.schedule('a', async () => void (runs += 1));
    await queue.idle();
    expect(runs).toBe(1);
  });

  it('runs one pass per key at a time and merges a burst into one follow-up', async () => {
    const queue = new KeyedQueue(() => undefined);
    const log: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    void queue.schedule('a', async () => {
      log.push('a1 start');
      await gate;
      log.push('a1 end');
    });
    await new Promise((resolve) => setTimeout(resolve, 1));
    // a1 is running: a burst queues exactly one follow-up pass.
    for (let i = 0; i < 5; i++) void queue.schedule('a', async () => void log.push('a2'));
    void queue.schedule('b', async () => void log.push('b'));
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(log).toEqual(['a1 start', 'b']);
    release();
    await queue.idle();
    expect(log).toEqual(['a1 start', 'b', 'a1 end', 'a2']);
  });
});
