// Shares one read-only request (e.g. a JetStream stream info) between callers that each need an answer from
// a request sent after they asked, so many concurrent callers cost one round trip instead of one each.

/**
 * Sharing rule: a caller may join only a request that has not been sent yet. A request sent after the call
 * is answered by a server that already saw everything that happened before the call; a request already on
 * its way may have been answered as of an earlier moment, so a caller arriving then waits for the next one.
 * At most one request is in flight; the next is sent when it settles, on behalf of everyone who asked
 * meanwhile.
 * @example
 * const lastSeq = new SharedRequest(async () => (await jsm.streams.info(name)).state.last_seq);
 * const seq = await lastSeq.sentAfterNow(); // covers everything stored before this line
 */
export class SharedRequest<T> {
  /** Settles when the request in flight (if any) has; never rejects. */
  private inFlight: Promise<unknown> = Promise.resolve();
  /** The next request, not sent yet: callers join it. */
  private joinable: Promise<T> | undefined;

  constructor(private readonly send: () => Promise<T>) {}

  /** The answer of a request sent after this call (shared with the callers who joined it). */
  sentAfterNow(): Promise<T> {
    if (this.joinable !== undefined) return this.joinable;
    const next = this.inFlight.then(() => {
      // Sent from here on: whoever asks later may be after the server answered it.
      this.joinable = undefined;
      return this.send();
    });
    this.joinable = next;
    this.inFlight = next.catch(() => undefined);
    return next;
  }
}
