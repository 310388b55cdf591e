// The fleet bench's slow-mode check and failure counting (issue 28).
import {
  ApiWriteCounter,
  apiWriteKey,
  countFailures,
  failureKey,
  slowModeOf,
  writesPerPolicy,
} from './fleet-health.js';

describe('fleet bench health', () => {
  it('calls a stage slow above 1.2 inspections per policy or with any failed pass', () => {
    expect(slowModeOf({ inspections: 1 }, { passes: { reconciled: 1, failed: 0 } })).toBeNull();
    expect(slowModeOf({ inspections: 1.2 }, { passes: {} })).toBeNull();
    expect(slowModeOf({ inspections: 1.9 }, { passes: {} })).toBe('1.9 inspections per policy');
    expect(slowModeOf({ inspections: 1 }, { passes: { failed: 0.1 } })).toBe('0.1 failed passes per policy');
  });

  it('counts failed passes by reason and warnings by message with names and numbers masked', () => {
    const lines = [
      {
        level: 'info',
        msg: 'policy bench/fleet-7 generation 1: failed (DatabaseInspectionFailed), next in 4s',
        decision: 'failed',
        reason: 'DatabaseInspectionFailed',
      },
      {
        level: 'info',
        msg: 'policy bench/fleet-8 generation 1: failed, next in 3s',
        decision: 'failed',
        reason: 'DatabaseInspectionFailed',
      },
      { level: 'warn', msg: 'publishing on rp.k8s.cmd.planner.patch-status failed (timeout); retry 1' },
      { level: 'warn', msg: 'publishing on rp.k8s.cmd.planner.patch-status failed (timeout); retry 2' },
      { level: 'error', msg: 'reconcile of bench/fleet-17 failed: this planner replica is not the leader' },
      {
        level: 'info',
        msg: 'policy bench/fleet-9 generation 1: reconciled, next in 300s',
        decision: 'reconciled',
      },
    ];
    const text = ['not json', ...lines.map((l) => JSON.stringify(l))].join('\n');
    expect(countFailures('planner', text)).toEqual([
      { service: 'planner', what: 'failed pass: DatabaseInspectionFailed', count: 2 },
      {
        service: 'planner',
        what: 'publishing on rp.k8s.cmd.planner.patch-status failed (timeout); retry N',
        count: 2,
      },
      {
        service: 'planner',
        what: 'reconcile of <ns>/<name> failed: this planner replica is not the leader',
        count: 1,
      },
    ]);
  });

  it('masks hex identifiers', () => {
    expect(failureKey('plan fleet-1-596b2db99dff not sent')).toBe('plan fleet-N-<id> not sent');
  });
});

describe('API writes by kind', () => {
  it('names a write by verb and resource, and skips reads', () => {
    expect(apiWriteKey('GET', '/api/v1/namespaces/bench/secrets/db-1')).toBeNull();
    expect(apiWriteKey('POST', '/api/v1/namespaces/bench/events')).toBe('POST events');
    expect(apiWriteKey('PUT', '/api/v1/namespaces/bench/events/fleet-1.abc')).toBe('PUT events');
    expect(
      apiWriteKey('PATCH', '/apis/rolepolicy.io/v1alpha1/namespaces/bench/postgrespolicies/fleet-1/status'),
    ).toBe('PATCH postgrespolicies/status');
    expect(apiWriteKey('POST', '/apis/coordination.k8s.io/v1/namespaces/bench/leases')).toBe('POST leases');
    expect(apiWriteKey('POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews')).toBe(
      'POST selfsubjectaccessreviews',
    );
  });

  it('reports writes per policy grown between two counts, with their total', () => {
    const counter = new ApiWriteCounter();
    counter.hook({ method: 'POST', path: '/api/v1/namespaces/b/events' });
    const before = counter.snapshot();
    for (let i = 0; i < 4; i++) counter.hook({ method: 'POST', path: '/api/v1/namespaces/b/events' });
    counter.hook({ method: 'GET', path: '/api/v1/namespaces/b/events' });
    counter.hook({
      method: 'PATCH',
      path: '/apis/rolepolicy.io/v1alpha1/namespaces/b/postgrespolicies/p/status',
    });
    expect(writesPerPolicy(before, counter.snapshot(), 2)).toEqual({
      'PATCH postgrespolicies/status': 0.5,
      'POST events': 2,
      total: 2.5,
    });
  });

  it('counts a write the API refused apart, outside the total', async () => {
    const counter = new ApiWriteCounter();
    const path = '/apis/rolepolicy.io/v1alpha1/namespaces/b/postgrespolicies/p/status';
    counter.hook({ method: 'PUT', path, responded: Promise.resolve(409) });
    counter.hook({ method: 'PUT', path, responded: Promise.resolve(200) });
    await new Promise((resolve) => setImmediate(resolve));
    expect(writesPerPolicy(new Map(), counter.snapshot(), 1)).toEqual({
      'PUT postgrespolicies/status': 1,
      'refused PUT postgrespolicies/status': 1,
      total: 1,
    });
  });
});
