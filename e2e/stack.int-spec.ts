// Smoke test of the end-to-end harness: the five services boot in-process against a private nats-server
// and the API emulator, all report ready, and a PostgresPolicy created with client-node reaches the
// planner's input stream through the k8s-gateway.
import { lastResourceEvent } from './support/stream.js';
import { SERVICE_NAMES, startStack, waitFor, type Stack } from './stack.js';

let stack: Stack;

beforeAll(async () => {
  stack = await startStack();
}, 45_000);

afterAll(async () => {
  await stack?.stop();
});

test('every service answers /readyz 200 against the private stack', async () => {
  await stack.waitReady();
  expect(stack.services.map((s) => s.name).sort()).toEqual([...SERVICE_NAMES].sort());
  for (const service of stack.services) {
    const res = await fetch(`${service.url}/readyz`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { checks: Record<string, string> };
    expect(body.checks['nats']).toBe('up');
  }
});

test('a PostgresPolicy created through client-node is published on rp.resource.postgrespolicy.<ns>.<name>', async () => {
  const db = await stack.createDatabase('smoke');
  await stack.resources.createPolicy('smoke', {
    connection: db.connection,
    mode: 'observe',
    approval: 'manual',
    roles: [{ name: stack.role('reader'), login: false }],
  });

  const event = await waitFor('the gateway to publish the policy', () =>
    lastResourceEvent(stack.nats.url, 'postgrespolicy', stack.namespace, 'smoke'),
  );
  expect(event.type).toBe('upsert');
  expect(event.object.kind).toBe('PostgresPolicy');
  const spec = (event.object as { spec?: { mode?: string; interval?: string } }).spec;
  // The object as admitted: the CRD default for `interval` is filled in.
  expect(spec).toMatchObject({ mode: 'observe', interval: '5m' });
});
