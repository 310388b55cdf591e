// End to end, a NATS outage: a policy created while the broker is down is reconciled within seconds of the
// broker's return (the gateway retries its publishes and sends what it missed on reconnect), not after the
// next resync; policies created afterwards converge as before.
import { condition, sleep, startStack, type Stack, type TargetDatabase } from './stack.js';

let stack: Stack;
let db: TargetDatabase;

beforeAll(async () => {
  // A resync period far beyond the test's bounds: only the outage handling can bring the policy in.
  stack = await startStack({ env: { RESYNC_INTERVAL_MS: String(30 * 60_000) } });
  db = await stack.createDatabase('outage');
}, 45_000);

afterAll(async () => {
  await stack?.stop();
});

const spec = (role: string) => ({
  connection: db.connection,
  mode: 'apply' as const,
  approval: 'auto' as const,
  roles: [{ name: role, login: false }],
});

async function roleExists(role: string): Promise<boolean> {
  return (await db.sql('SELECT 1 FROM pg_roles WHERE rolname = $1', [role])).length === 1;
}

test('a policy created while NATS is down is Ready=True within 30 s of its return', async () => {
  await stack.resources.createPolicy('before', spec(stack.role('before')));
  await stack.reconciled('before');

  await stack.nats.stop();
  const during = stack.role('during');
  await stack.resources.createPolicy('during', spec(during));
  // Long enough for the gateway's first publish of it to fail and its retries to begin.
  await sleep(6_000);
  await stack.nats.start();

  const ready = await stack.reconciled('during', 30_000);
  expect(condition(ready.status?.conditions, 'Ready')?.status).toBe('True');
  expect(await roleExists(during)).toBe(true);

  const after = stack.role('after');
  await stack.resources.createPolicy('after', spec(after));
  await stack.reconciled('after');
  expect(await roleExists(after)).toBe(true);
}, 120_000);
