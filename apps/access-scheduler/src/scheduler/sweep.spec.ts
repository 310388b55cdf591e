// The Sweep requests of a rebuild (ADR 0020): one per existing target an access policy names.
import { SWEEP_BUNDLE } from '@rolepolicy/contracts';
import { sweepRequests } from './sweep.js';

const access = (ns: string, name: string, target: string) => ({
  metadata: { name, namespace: ns },
  spec: { postgresPolicyRef: { name: target } },
});
const policies = new Map([
  ['team-a/orders', { metadata: { name: 'orders', namespace: 'team-a', uid: 'uid-orders' } }],
  ['team-b/orders', { metadata: { name: 'orders', namespace: 'team-b', uid: 'uid-orders-b' } }],
  ['team-a/nouid', { metadata: { name: 'nouid', namespace: 'team-a' } }],
]);
const policy = (ns: string, name: string) => policies.get(`${ns}/${name}`);

describe('sweepRequests', () => {
  it('sends one Sweep per target, in its own namespace, naming only the target', () => {
    const sent = sweepRequests(
      [
        access('team-a', 'read', 'orders'),
        access('team-a', 'write', 'orders'),
        access('team-b', 'read', 'orders'),
        access('team-a', 'gone', 'missing'),
        access('team-a', 'odd', 'nouid'),
      ],
      policy,
      1_000,
    );
    expect(sent.map((m) => `${m.policy.namespace}/${m.policy.name}`)).toEqual([
      'team-a/orders',
      'team-b/orders',
    ]);
    const ref = {
      apiVersion: 'rolepolicy.io/v1alpha1',
      kind: 'PostgresPolicy',
      namespace: 'team-a',
      name: 'orders',
      uid: 'uid-orders',
    };
    expect(sent[0]).toEqual({
      v: 1,
      plan: ref,
      request: ref,
      policy: ref,
      operation: 'Sweep',
      bundleHash: SWEEP_BUNDLE,
      idempotencyKey: 'uid-orders/Sweep/1000',
    });
  });

  it('gives each rebuild its own message id, so JetStream does not drop the next sweep as a duplicate', () => {
    const [first] = sweepRequests([access('team-a', 'read', 'orders')], policy, 1_000);
    const [second] = sweepRequests([access('team-a', 'read', 'orders')], policy, 31_000);
    expect(first!.idempotencyKey).not.toBe(second!.idempotencyKey);
  });
});
