import { Registry } from 'prom-client';
import {
  pendingApproval,
  registerPendingApprovalMetrics,
  type PlanLike,
} from './pending-approval-metrics.js';

const plan = (phase: string, created: string): PlanLike => ({
  metadata: { creationTimestamp: created },
  status: { phase },
});

describe('plans pending approval', () => {
  it('counts only Pending plans and ages the oldest of them', () => {
    const now = Date.parse('2026-11-25T12:00:00Z');
    const plans = [
      plan('Pending', '2026-11-25T11:50:00Z'),
      plan('Applied', '2026-11-25T08:00:00Z'),
      plan('Pending', '2026-11-25T11:30:00Z'),
      plan('Superseded', '2026-11-25T09:00:00Z'),
    ];
    expect(pendingApproval(plans, now)).toEqual({ count: 2, oldestSeconds: 1800 });
  });

  it('reports zero, not a stale age, when nothing waits', () => {
    expect(pendingApproval([plan('Applied', '2026-11-25T08:00:00Z')], Date.now())).toEqual({
      count: 0,
      oldestSeconds: 0,
    });
  });

  it('is exported from the cache at scrape time', async () => {
    const registry = new Registry();
    let plans: PlanLike[] = [];
    registerPendingApprovalMetrics(registry, () => plans);
    expect(await registry.metrics()).toMatch(/^rp_plans_pending_approval 0$/m);
    plans = [plan('Pending', new Date(Date.now() - 120_000).toISOString())];
    const text = await registry.metrics();
    expect(text).toMatch(/^rp_plans_pending_approval 1$/m);
    expect(
      Number(/^rp_plans_pending_approval_oldest_seconds (\S+)$/m.exec(text)?.[1]),
    ).toBeGreaterThanOrEqual(120);
  });
});
