// The message counters' subject label: bounded (no namespaces or names), and specific enough to say which
// gateway commands a policy costs.
import { EVENT_LOOP_SAMPLE_MS, createServiceMetrics } from './metrics.js';

async function subjects(metrics: ReturnType<typeof createServiceMetrics>): Promise<string[]> {
  const { values } = await metrics.handled.get();
  return values.map((v) => String(v.labels.subject)).sort();
}

describe('message counters', () => {
  it('label gateway commands by command, and other subjects before any name', async () => {
    const metrics = createServiceMetrics('test');
    const handled = (subject: string) => metrics.observe({ kind: 'handled', consumer: 'c', subject });
    handled('rp.k8s.cmd.planner.patch-status');
    handled('rp.k8s.cmd.planner.record-event');
    handled('rp.execute.request');
    handled('rp.resource.postgrespolicy.team-a.orders');
    handled('rp.resource.postgrespolicy.team-b.billing');
    expect(await subjects(metrics)).toEqual([
      'rp.execute.request',
      'rp.k8s.cmd.planner.patch-status',
      'rp.k8s.cmd.planner.record-event',
      'rp.resource.postgrespolicy',
    ]);
  });
});

/** One lag metric over the window since the last scrape (each scrape reads and resets the histogram). */
async function lag(metrics: ReturnType<typeof createServiceMetrics>, name: string): Promise<number> {
  const text = await metrics.registry.metrics();
  return Number(new RegExp(`^${name}\\S* (\\S+)$`, 'm').exec(text)?.[1]);
}

describe('default metrics', () => {
  it('sample the event loop every 100 ms, not every 10: an idle service wakes for it 10 times a second', async () => {
    const metrics = createServiceMetrics('test');
    await metrics.registry.metrics();
    await new Promise((resolve) => setTimeout(resolve, 4 * EVENT_LOOP_SAMPLE_MS));
    // The histogram records the interval between two samples: never much shorter than the sampling interval
    // (about 0.01 s at prom-client's default).
    const shortest = await lag(metrics, 'nodejs_eventloop_lag_min_seconds');
    expect(shortest).toBeGreaterThan(0.09);
    expect(shortest).toBeLessThan(1);
  });
});
