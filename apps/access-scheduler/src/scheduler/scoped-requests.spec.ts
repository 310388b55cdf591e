// The scoped request the scheduler sends the executor: bound to the request, the target and (when the cache
// shows it) the plan's uid, keyed by request uid, operation and bundle hash.
import type { Cached } from '@rolepolicy/contracts';
import { request } from '../lifecycle/test-support/fixtures.js';
import { ScopedRequests, scopedRequestMessage } from './scoped-requests.js';

const resolved = request({
  phase: 'Applying',
  resolvedAccess: {
    accessPolicyGeneration: 1,
    accessPolicyUid: 'uid-eap',
    bundleEncoding: 'rolepolicy.io/ephemeral-membership-bundle/v1',
    bundleHash: `sha256:${'a'.repeat(64)}`,
    grantedDuration: '1800s',
    memberships: [{ role: 'reader', member: 'alice', inherit: true }],
    targetDatabaseFingerprint: `sha256:${'b'.repeat(64)}`,
    targetPolicyGeneration: 3,
    targetPolicyUid: 'uid-orders',
  },
}) as Cached<'ephemeralaccessrequest'>;

describe('scopedRequestMessage', () => {
  it('names the plan, the request and the target, and is keyed by request, operation and bundle', () => {
    const message = scopedRequestMessage(resolved, 'Activate', 'orders', 'uid-plan');
    expect(message).toMatchObject({
      v: 1,
      plan: { kind: 'PostgresPolicyPlan', namespace: 'team-a', uid: 'uid-plan' },
      request: { kind: 'EphemeralAccessRequest', name: 'alice-read', uid: resolved.metadata.uid },
      policy: { kind: 'PostgresPolicy', name: 'orders', uid: 'uid-orders' },
      operation: 'Activate',
      bundleHash: `sha256:${'a'.repeat(64)}`,
      idempotencyKey: `${resolved.metadata.uid}/Activate/sha256:${'a'.repeat(64)}`,
    });
  });

  it('carries no plan uid for a plan whose create was just sent', () => {
    const message = scopedRequestMessage(resolved, 'Revoke', 'orders', undefined);
    expect(message.plan).not.toHaveProperty('uid');
    expect(message.plan.name).not.toBe(
      scopedRequestMessage(resolved, 'Activate', 'orders', undefined).plan.name,
    );
    expect(message.idempotencyKey).toBe(`${resolved.metadata.uid}/Revoke/sha256:${'a'.repeat(64)}`);
  });
});

describe('ScopedRequests.send', () => {
  it('says how far the cache had read what the executor verifies against, leaving out kinds not seen yet', async () => {
    const applied: Record<string, number> = {
      postgrespolicy: 7,
      postgrespolicyplan: 40,
      ephemeralaccessrequest: 39,
    };
    const sent: unknown[] = [];
    const scoped = new ScopedRequests({
      cache: { get: () => undefined, appliedSequence: (kind) => applied[kind] ?? 0 },
      publisher: {
        publish: async (_contract, _subject, message) => {
          sent.push(message);
          return { stream: 'RP', seq: sent.length, duplicate: false };
        },
      },
      log: { warn: () => undefined },
    });
    await scoped.send(resolved, 'Revoke', 1_000, 'orders');
    expect(sent).toEqual([
      expect.objectContaining({
        operation: 'Revoke',
        resourceSequences: { postgrespolicy: 7, postgrespolicyplan: 40, ephemeralaccessrequest: 39 },
      }),
    ]);
  });
});
