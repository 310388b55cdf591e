// End to end, notifications with the production retry schedule (issue 26): the receiver is down (connections
// refused) for a full minute while a plan waits for approval, comes back, and gets the notification once.
// e2e/notifications.int-spec.ts covers every type with a shortened schedule; this file keeps the real one.
import { startStack, sleep, waitFor, type Stack } from './stack.js';
import { metricSums } from './support/metrics.js';
import { WebhookReceiver } from './support/receiver.js';

const DOWN_MS = 60_000;

let stack: Stack;
let receiver: WebhookReceiver;

beforeAll(async () => {
  receiver = new WebhookReceiver();
  await receiver.up();
  // Default NOTIFICATIONS_RETRY_* (10 attempts from 1 s, doubling): nothing about delivery is shortened.
  stack = await startStack({ env: { ACCESS_SCHEDULER_REBUILD_INTERVAL_MS: '2000' } });
  await stack.core.createNamespacedSecret({
    namespace: stack.namespace,
    body: {
      metadata: { name: 'hooks', namespace: stack.namespace },
      stringData: { url: receiver.url('/ce'), 'signing-key': 'outage-signing-key' },
    },
  });
  await stack.core.createNamespacedConfigMap({
    namespace: stack.namespace,
    body: {
      metadata: { name: 'rolepolicy-notifications', namespace: stack.namespace },
      data: { urlSecretName: 'hooks', signingSecretName: 'hooks', types: 'plan.pending-approval' },
    },
  });
}, 60_000);

afterAll(async () => {
  await stack?.stop();
  await receiver?.down();
}, 180_000);

test('a receiver down for a minute gets the pending plan once it is back', async () => {
  await receiver.down();
  const db = await stack.createDatabase('outage');
  await stack.resources.createPolicy('outage', {
    connection: db.connection,
    mode: 'apply',
    approval: 'manual',
    roles: [{ name: stack.role('outage_a'), login: false }],
  });
  const scheduler = stack.services.find((s) => s.name === 'access-scheduler')!.url;
  await waitFor('a first attempt refused', async () => {
    const failed = await metricSums(scheduler, 'rolepolicy_notification_attempts_failed_total');
    return (failed['total'] ?? 0) >= 1;
  });
  await sleep(DOWN_MS);
  const refused = (await metricSums(scheduler, 'rolepolicy_notification_attempts_failed_total'))['total'];
  expect(refused).toBeGreaterThanOrEqual(3);
  expect(await metricSums(scheduler, 'rolepolicy_notifications_dead_lettered_total')).toEqual({});
  await receiver.up();

  const [delivered] = await waitFor(
    'the notification after the outage',
    async () => {
      const accepted = receiver.accepted('/ce');
      return accepted.length > 0 ? accepted : undefined;
    },
    { timeoutMs: 150_000 },
  );
  const event = JSON.parse(delivered!.body) as { type: string; data: { policy: string } };
  expect(event).toMatchObject({ type: 'io.rolepolicy.plan.pending-approval', data: { policy: 'outage' } });
  expect(receiver.accepted('/ce')).toHaveLength(1);
}, 300_000);
