// The gateway's Event writer against the API emulator: one Event per object + type + reason + message
// + component whose count grows, a redelivered command counted once, the involved object's uid filled
// in (kubectl describe selects by it), and secrets redacted even if a sender forgot.
import { CoreV1Api } from '@kubernetes/client-node';
import type { K8sCommandV1 } from '@rolepolicy/contracts';
import { startEmulator, type Emulator } from '@rolepolicy/testing';
import { EventRecorder } from './event-recorder.js';

type RecordEvent = Extract<K8sCommandV1, { command: 'record-event' }>;

let emu: Emulator;
let core: CoreV1Api;
let recorder: EventRecorder;
let uid: string;

beforeAll(async () => {
  emu = await startEmulator();
  core = emu.kubeConfig().makeApiClient(CoreV1Api);
  recorder = new EventRecorder(emu.kubeConfig(), 'gateway-0');
  const cm = await core.createNamespacedConfigMap({
    namespace: 'team-a',
    body: { metadata: { name: 'subject' } },
  });
  uid = cm.metadata!.uid!;
});

afterAll(async () => {
  await emu.stop();
});

function command(key: string, message = 'plan orders-1 applied'): RecordEvent {
  return {
    v: 1,
    command: 'record-event',
    target: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'team-a', name: 'subject' },
    event: {
      type: 'Normal',
      reason: 'PlanApplied',
      message,
      action: 'Apply',
      component: 'rolepolicy-planner',
    },
    idempotencyKey: key,
  };
}

async function events() {
  return (await core.listNamespacedEvent({ namespace: 'team-a', fieldSelector: `involvedObject.uid=${uid}` }))
    .items;
}

test('the same event twice is one Event with count 2; a redelivered command does not count', async () => {
  await recorder.record(command('k1'));
  await recorder.record(command('k2'));
  await recorder.record(command('k2')); // redelivery of the second command
  const [event, ...rest] = await events();
  expect(rest).toHaveLength(0);
  expect(event).toMatchObject({
    count: 2,
    type: 'Normal',
    reason: 'PlanApplied',
    message: 'plan orders-1 applied',
    action: 'Apply',
    source: { component: 'rolepolicy-planner' },
    reportingComponent: 'rolepolicy-planner',
    reportingInstance: 'gateway-0',
    involvedObject: { kind: 'ConfigMap', name: 'subject', namespace: 'team-a', uid },
  });
  expect(event!.lastTimestamp!.getTime()).toBeGreaterThanOrEqual(event!.firstTimestamp!.getTime());
});

test('a different message is a separate Event; secrets in a message are redacted before writing', async () => {
  await recorder.record(command('k3', 'connecting to postgres://app:hunter2@db:5432/x failed'));
  const messages = (await events()).map((e) => e.message).sort();
  expect(messages).toEqual(['connecting to postgres://[REDACTED]@db:5432/x failed', 'plan orders-1 applied']);
});

test('a new Event is created without reading first; a repeat is read and counted', async () => {
  const requests: string[] = [];
  emu.setRequestHook(({ method, path }) => {
    if (path.includes('/events')) requests.push(method);
  });
  try {
    await recorder.record({ ...command('k-new', 'a new message'), target: { ...command('x').target, uid } });
    expect(requests).toEqual(['POST']);
    requests.length = 0;
    await recorder.record({
      ...command('k-again', 'a new message'),
      target: { ...command('x').target, uid },
    });
    // The same Event again: the create answers 409, then read and count.
    expect(requests).toEqual(['POST', 'GET', 'PUT']);
  } finally {
    emu.setRequestHook(undefined);
  }
  const counted = (await events()).find((e) => e.message === 'a new message');
  expect(counted?.count).toBe(2);
});
