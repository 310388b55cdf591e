// Concurrent syncs share round trips, but never an answer that may predate their own call.
import { SharedRequest } from './shared-request.js';

/** A request whose answers the test gives by hand, recording what each one was sent after. */
function manual() {
  let state = 0;
  const sent: { seenState: number; answer: (v: number) => void; fail: (e: Error) => void }[] = [];
  const shared = new SharedRequest<number>(
    () =>
      new Promise<number>((answer, fail) => {
        sent.push({ seenState: state, answer, fail });
      }),
  );
  return {
    shared,
    sent,
    /** Something happens on the "server" (e.g. an event is stored). */
    advance: () => (state += 1),
    /** Lets queued promise callbacks run. */
    settle: () => new Promise((r) => setImmediate(r)),
  };
}

describe('SharedRequest', () => {
  it('callers who ask before the request is sent share one request', async () => {
    const m = manual();
    const answers = [m.shared.sentAfterNow(), m.shared.sentAfterNow(), m.shared.sentAfterNow()];
    await m.settle();
    expect(m.sent).toHaveLength(1);
    m.sent[0]!.answer(m.sent[0]!.seenState);
    expect(await Promise.all(answers)).toEqual([0, 0, 0]);
  });

  it('a caller arriving while a request is in flight gets the next one, sent after its call', async () => {
    const m = manual();
    const early = m.shared.sentAfterNow();
    await m.settle();
    m.advance(); // happens after the first request was sent
    const late = [m.shared.sentAfterNow(), m.shared.sentAfterNow()];
    await m.settle();
    expect(m.sent).toHaveLength(1); // one at a time: the next waits for the first to settle
    m.sent[0]!.answer(m.sent[0]!.seenState);
    expect(await early).toBe(0);
    await m.settle();
    expect(m.sent).toHaveLength(2);
    m.sent[1]!.answer(m.sent[1]!.seenState);
    expect(await Promise.all(late)).toEqual([1, 1]);
  });

  it('a failed request fails its callers only; the next caller sends a new one', async () => {
    const m = manual();
    const failing = m.shared.sentAfterNow();
    await m.settle();
    m.sent[0]!.fail(new Error('timeout'));
    await expect(failing).rejects.toThrow('timeout');
    const next = m.shared.sentAfterNow();
    await m.settle();
    expect(m.sent).toHaveLength(2);
    m.sent[1]!.answer(7);
    expect(await next).toBe(7);
  });
});
