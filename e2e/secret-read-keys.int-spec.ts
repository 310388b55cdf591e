// Security review row 11, as a service's own NATS user: a Secret read answers only the keys that the
// rolepolicy.io objects naming the Secret read (`hostSecret.key`, `portSecret.key`, ...), not every key of
// it. A connection Secret that also holds an API token no longer hands the token to the access-scheduler,
// the inspector or the planner, which may all send reads (ADR 0018).
import { SecretAccessClient } from '@rolepolicy/contracts';
import { startStack, type Stack, type TargetDatabase } from './stack.js';

let stack: Stack;
let db: TargetDatabase;

beforeAll(async () => {
  stack = await startStack({ natsAccessControl: true });
  db = await stack.createDatabase('keys');
}, 60_000);

// On the secured NATS a service's close has been seen to take over a minute (cause open, docs/next-steps).
afterAll(async () => {
  await stack?.stop();
}, 180_000);

test("a read as the access-scheduler gets the keys the policy names, never the Secret's other keys", async () => {
  await stack.waitReady();
  const ns = stack.namespace;
  await stack.core.createNamespacedSecret({
    namespace: ns,
    body: {
      metadata: { name: 'team-db' },
      stringData: { host: '127.0.0.1', port: '5432', 'api-token': 'rp-marker-token-51d0' },
    },
  });
  await stack.resources.createPolicy('keys', {
    connection: {
      params: {
        hostSecret: { name: 'team-db', key: 'host' },
        portSecret: { name: 'team-db', key: 'port' },
        dbname: db.database,
        username: 'postgres',
      },
    },
    mode: 'apply',
    approval: 'auto',
    roles: [{ name: stack.role('keys_app') }],
  });
  // The planner resolved the connection from the narrowed answer: the policy converged.
  await stack.reconciled('keys', 60_000);
  const nc = await stack.natsAccess!.connect('access-scheduler');
  try {
    const read = await new SecretAccessClient(nc).read(ns, ['team-db']);
    const secret = read.secrets.get('team-db');
    expect(Object.keys(secret?.data ?? {}).sort()).toEqual(['host', 'port']);
    expect(JSON.stringify(secret)).not.toContain(Buffer.from('rp-marker-token-51d0').toString('base64'));
  } finally {
    await nc.drain();
  }
  expect(await stack.natsAccess!.violations()).toEqual([]);
}, 120_000);
