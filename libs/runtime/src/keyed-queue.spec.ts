// KeyedQueue: one run per key at a time, and a burst of requests merged into one follow-up run.
import { KeyedQueue } from './keyed-queue.js';
import { Slots } from './slots.js';

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

describe('KeyedQueue with slots', () => {
  const tick = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 1));

  it('runs at most the slot count of passes at once, the rest in arrival order', async () => {
    const queue = new KeyedQueue(() => undefined, { slots: new Slots(2) });
    let running = 0;
    let peak = 0;
    const started: string[] = [];
    const gates = new Map<string, () => void>();
    for (const key of ['a', 'b', 'c', 'd']) {
      void queue.schedule(key, async () => {
        started.push(key);
        running += 1;
        peak = Math.max(peak, running);
        await new Promise<void>((resolve) => gates.set(key, resolve));
        running -= 1;
      });
    }
    await tick();
    expect(started).toEqual(['a', 'b']);
    gates.get('b')!();
    await tick();
    expect(started).toEqual(['a', 'b', 'c']);
    gates.get('a')!();
    gates.get('c')!();
    await tick();
    gates.get('d')!();
    await queue.idle();
    expect(started).toEqual(['a', 'b', 'c', 'd']);
    expect(peak).toBe(2);
  });

  it('merges requests into a pass that is still waiting for a slot', async () => {
    const queue = new KeyedQueue(() => undefined, { slots: new Slots(1) });
    let release!: () => void;
    void queue.schedule('busy', () => new Promise<void>((resolve) => (release = resolve)));
    let runs = 0;
    for (let i = 0; i < 5; i++) void queue.schedule('waiting', async () => void (runs += 1));
    await tick();
    expect(runs).toBe(0);
    release();
    await queue.idle();
    expect(runs).toBe(1);
  });

  it('never makes a result wait for a slot', async () => {
    const queue = new KeyedQueue(() => undefined, { slots: new Slots(1) });
    let release!: () => void;
    void queue.schedule('busy', () => new Promise<void>((resolve) => (release = resolve)));
    let handled = false;
    await queue.run('other', async () => void (handled = true));
    expect(handled).toBe(true);
    release();
    await queue.idle();
  });

  it('never makes a result wait behind a pass of its key that still waits for a slot', async () => {
    // The fleet's trigger: the plan's Applied status event queued a pass behind 500 others; the result
    // handler (one at a time) waited for it, and every other result waited behind that one.
    const queue = new KeyedQueue(() => undefined, { slots: new Slots(1) });
    let release!: () => void;
    void queue.schedule('busy', () => new Promise<void>((resolve) => (release = resolve)));
    const order: string[] = [];
    void queue.schedule('policy', async () => void order.push('pass'));
    await tick();
    await queue.run('policy', async () => void order.push('result'));
    expect(order).toEqual(['result']);
    release();
    await queue.idle();
    expect(order).toEqual(['result', 'pass']);
  });

  it('a result still waits for the running pass of its key', async () => {
    const queue = new KeyedQueue(() => undefined, { slots: new Slots(2) });
    let release!: () => void;
    const order: string[] = [];
    void queue.schedule('policy', async () => {
      order.push('pass start');
      await new Promise<void>((resolve) => (release = resolve));
      order.push('pass end');
    });
    await tick();
    const result = queue.run('policy', async () => void order.push('result'));
    await tick();
    expect(order).toEqual(['pass start']);
    release();
    await result;
    expect(order).toEqual(['pass start', 'pass end', 'result']);
  });

  it('frees the slot of a pass that failed', async () => {
    const errors: string[] = [];
    const queue = new KeyedQueue((key) => errors.push(key), { slots: new Slots(1) });
    void queue.schedule('a', () => Promise.reject(new Error('boom')));
    let ran = false;
    void queue.schedule('b', async () => void (ran = true));
    await queue.idle();
    expect(errors).toEqual(['a']);
    expect(ran).toBe(true);
  });

  it('starts a waiting pass that is urgent before earlier ones', async () => {
    const queue = new KeyedQueue(() => undefined, { slots: new Slots(1) });
    let release!: () => void;
    void queue.schedule('busy', () => new Promise<void>((resolve) => (release = resolve)));
    const started: string[] = [];
    const urgent = new Set<string>(['asked-urgent']);
    for (const key of ['first', 'second', 'confirm', 'asked-urgent', 'merged']) {
      void queue.schedule(
        key,
        async () => void started.push(key),
        () => urgent.has(key),
      );
    }
    // Became urgent while it waited (an Applied result arrived): the result hurries it.
    urgent.add('confirm');
    queue.hurry('confirm');
    // Became urgent and asked for again: the merged request hurries it.
    urgent.add('merged');
    void queue.schedule(
      'merged',
      async () => void started.push('merged again'),
      () => urgent.has('merged'),
    );
    await tick();
    release();
    await queue.idle();
    expect(started).toEqual(['confirm', 'asked-urgent', 'merged', 'first', 'second']);
  });

  it('hurries nothing for a key whose pass is not waiting, and a started pass stays started once', async () => {
    const queue = new KeyedQueue(() => undefined, { slots: new Slots(1) });
    let release!: () => void;
    void queue.schedule('busy', () => new Promise<void>((resolve) => (release = resolve)));
    queue.hurry('busy'); // running, not waiting
    queue.hurry('absent');
    const started: string[] = [];
    for (const key of ['first', 'second']) void queue.schedule(key, async () => void started.push(key));
    await tick();
    release();
    await queue.idle();
    queue.hurry('first'); // done: nothing to hurry
    expect(started).toEqual(['first', 'second']);
  });
});
