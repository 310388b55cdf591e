// The reads of a scoped execution before its lock (ADR 0030, amended): what the access-scheduler saw, waited for
// locally, stands in for a sync for a go; a stop or Applied is only taken on a synced read; a request without
// sequences, or a cache that does not get there in time, syncs once.
import type { ExecutionCluster } from '../execution/execution-cluster.js';
import { visibleState } from './scoped-state.js';
import type { ScopedState } from './scoped-verify.js';
import { message, request, state } from './test-support/scoped-fixtures.js';

const WAITS = { sequenceWaitMs: 50, visibilityWaitMs: 50 };
const SEEN = { postgrespolicyplan: 40, ephemeralaccessrequest: 39 };

/** A cache holding `held` until a sync brings it to `stored`; `reaches` answers every reach. */
function cluster(
  held: ScopedState,
  stored: ScopedState,
  reaches: boolean,
  operation: 'Activate' | 'Revoke' = 'Activate',
) {
  const calls = { syncs: 0, reaches: 0 };
  let view = held;
  const planName = message(operation).plan.name;
  const get = (kind: string, _ns: string, name: string): unknown => {
    if (kind === 'ephemeralaccessrequest') return view.request;
    if (kind === 'postgrespolicy') return view.policy;
    return name === planName ? view.plan : view.activationPlan;
  };
  const fake = {
    cache: {
      isReady: true,
      get,
      list: () => [],
      sync: async () => {
        calls.syncs += 1;
        view = stored;
      },
      reach: async () => {
        calls.reaches += 1;
        return reaches;
      },
    },
    view: { changed: (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)) },
  } as unknown as ExecutionCluster;
  return { fake, calls };
}

describe('visibleState', () => {
  it('an Activate carrying sequences its cache has applied reads without a sync', async () => {
    const { fake, calls } = cluster(state(), state(), true);
    const read = await visibleState({ ...message(), resourceSequences: SEEN }, fake, WAITS);
    expect(read).toEqual(state());
    expect(calls).toEqual({ syncs: 0, reaches: 1 });
  });

  it('an Activate without sequences (an older scheduler) syncs once', async () => {
    const { fake, calls } = cluster(state(), state(), true);
    await visibleState(message(), fake, WAITS);
    expect(calls).toEqual({ syncs: 1, reaches: 0 });
  });

  it('a cache that does not reach the sequences in time syncs instead', async () => {
    const { fake, calls } = cluster(state(), state(), false);
    await visibleState({ ...message(), resourceSequences: SEEN }, fake, WAITS);
    expect(calls).toEqual({ syncs: 1, reaches: 1 });
  });

  it('a stop on the view the scheduler saw is decided again on a synced read', async () => {
    // Held: the request not activating yet; stored: activating (a stop on the held view would fail it).
    const { fake, calls } = cluster(state({ request: request('Pending') }), state(), true);
    const read = await visibleState({ ...message(), resourceSequences: SEEN }, fake, WAITS);
    expect(read).toEqual(state());
    expect(calls.syncs).toBe(1);
  });

  it('a stop still stored after the sync is returned as read', async () => {
    const gone = state({ request: undefined });
    const { fake, calls } = cluster(gone, gone, true);
    const read = await visibleState({ ...message(), resourceSequences: SEEN }, fake, WAITS);
    expect(read.request).toBeUndefined();
    expect(calls.syncs).toBe(1);
  });

  it('a Revoke on a ready cache reads at once and waits for nothing when it proceeds', async () => {
    const revoking = state({}, 'Revoke');
    const { fake, calls } = cluster(revoking, revoking, true, 'Revoke');
    await visibleState({ ...message('Revoke'), resourceSequences: SEEN }, fake, WAITS);
    expect(calls).toEqual({ syncs: 0, reaches: 0 });
  });
});
