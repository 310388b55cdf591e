// The message counters' subject label: bounded (no namespaces or names), and specific enough to say which
// gateway commands a policy costs.
import { createServiceMetrics } from './metrics.js';

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
