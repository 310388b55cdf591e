// The "working on it" write happens only when the work outlasts the delay, and always before the caller
// goes on to its final write.
import { announceIfSlow, type AnnounceTimers } from './announce-if-slow.js';

function manualTimers(): AnnounceTimers & { fire: () => void; pending: () => boolean } {
  let fire: (() => void) | undefined;
  return {
    set: (f) => {
      fire = f;
      return 1;
    },
    clear: () => {
      fire = undefined;
    },
    fire: () => fire?.(),
    pending: () => fire !== undefined,
  };
}

function deferred<T>(): { promise: Promise<T>; resolve: (v: T) => void; reject: (e: unknown) => void } {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

test('work that ends before the delay announces nothing', async () => {
  const timers = manualTimers();
  let announced = 0;
  const announce = async () => {
    announced += 1;
  };
  await expect(announceIfSlow(async () => 'planned', announce, 1_000, timers)).resolves.toBe('planned');
  expect(announced).toBe(0);
  expect(timers.pending()).toBe(false);
});

test('slow work is announced, and the call ends only after the announcement is written', async () => {
  const timers = manualTimers();
  const work = deferred<string>();
  const write = deferred<void>();
  const order: string[] = [];
  const call = announceIfSlow(
    () => work.promise,
    async () => {
      order.push('announce started');
      await write.promise;
      order.push('announce written');
    },
    1_000,
    timers,
  ).then((value) => order.push(`returned ${value}`));
  timers.fire();
  work.resolve('planned');
  await new Promise((r) => setImmediate(r));
  expect(order).toEqual(['announce started']);
  write.resolve();
  await call;
  expect(order).toEqual(['announce started', 'announce written', 'returned planned']);
});

test('a failed announcement fails the call; a failed work fails it with the work error', async () => {
  const timers = manualTimers();
  const work = deferred<string>();
  const call = announceIfSlow(
    () => work.promise,
    async () => {
      throw new Error('gateway unavailable');
    },
    1_000,
    timers,
  );
  timers.fire();
  work.resolve('planned');
  await expect(call).rejects.toThrow('gateway unavailable');

  const failing = manualTimers();
  await expect(
    announceIfSlow(
      async () => {
        throw new Error('inspector timed out');
      },
      async () => undefined,
      1_000,
      failing,
    ),
  ).rejects.toThrow('inspector timed out');
});
