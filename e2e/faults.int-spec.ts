// End to end, the product under faults of the target database: an outage is counted in
// transient_failure_count, retried with backoff and recovered from on its own; a target whose physical
// identity cannot be read is refused under requirePhysicalIdentity, and a plan approved for a readable
// identity fails closed when the identity disappears before execution. And one non-fault that looks
// like one: a connection Secret created just before its policy is never reported missing.
import { startTcpProxy, type TcpProxy } from '@rolepolicy/testing';
import { condition, sleep, startStack, waitFor, type Stack, type TargetDatabase } from './stack.js';
import { recordResourceEvents } from './support/stream.js';

let stack: Stack;
let db: TargetDatabase;
let proxy: TcpProxy | undefined;

beforeAll(async () => {
  stack = await startStack();
  db = await stack.createDatabase('faults');
}, 45_000);

afterAll(async () => {
  await proxy?.dispose();
  await stack?.stop();
});

const policyStatus = (name: string) => () => stack.resources.policy(name).then((p) => p?.status);

async function roleExists(role: string): Promise<boolean> {
  return (await db.sql('SELECT 1 FROM pg_roles WHERE rolname = $1', [role])).length === 1;
}

/** A Secret whose `DATABASE_URL` reaches the target as `user` through `port` (trust auth here). */
async function connectionSecret(name: string, options: { port?: number; user?: string }): Promise<void> {
  const url = new URL(db.url);
  if (options.port !== undefined) url.port = String(options.port);
  if (options.user !== undefined) url.username = options.user;
  await stack.core.createNamespacedSecret({
    namespace: stack.namespace,
    body: { metadata: { name }, type: 'Opaque', stringData: { DATABASE_URL: url.toString() } },
  });
}

test('a database outage is counted in transient_failure_count, backed off, and recovered from', async () => {
  proxy = await startTcpProxy(Number(new URL(db.url).port || 5432));
  await connectionSecret('via-proxy', { port: proxy.port });
  const first = stack.role('outage_first');
  const second = stack.role('outage_second');
  await stack.resources.createPolicy('flaky', {
    connection: { secretRef: { name: 'via-proxy' } },
    mode: 'apply',
    approval: 'auto',
    roles: [{ name: first, login: false }],
  });
  await stack.reconciled('flaky');

  await proxy.cut();
  await stack.resources.patchPolicySpec('flaky', {
    roles: [
      { name: first, login: false },
      { name: second, login: false },
    ],
  });
  const failing = await waitFor(
    'two consecutive transient failures',
    async () => {
      const p = await stack.resources.policy('flaky');
      return (p?.status?.transient_failure_count ?? 0) >= 2 ? p : undefined;
    },
    { timeoutMs: 30_000, describe: policyStatus('flaky') },
  );
  expect(condition(failing.status?.conditions, 'Ready')).toMatchObject({ status: 'False' });
  expect(condition(failing.status?.conditions, 'Degraded')?.status).toBe('True');
  expect(failing.status?.last_error).toEqual(expect.any(String));
  // Backoff, not a hot loop: with two failures counted the next retry is 7.5 s or more away, so a few
  // seconds later the count has not run on (an event may still trigger one extra pass).
  const counted = failing.status?.transient_failure_count ?? 0;
  await sleep(3_000);
  const later = (await stack.resources.policy('flaky'))?.status?.transient_failure_count ?? 0;
  expect(later).toBeGreaterThanOrEqual(counted);
  expect(later).toBeLessThanOrEqual(counted + 1);
  expect(await roleExists(second)).toBe(false);

  await proxy.restore();
  const recovered = await stack.reconciled('flaky', 45_000);
  expect(recovered.status?.transient_failure_count ?? 0).toBe(0);
  expect(recovered.status?.last_error ?? null).toBeNull();
  expect(await roleExists(second)).toBe(true);
}, 90_000);

test('requirePhysicalIdentity: planning is refused when system_identifier cannot be read', async () => {
  // A non-superuser operator that may manage roles but not read pg_control_system() in this database.
  const operator = stack.role('operator_blind');
  await db.sql(`CREATE ROLE "${operator}" LOGIN CREATEROLE`);
  await db.sql('REVOKE EXECUTE ON FUNCTION pg_control_system() FROM PUBLIC');
  await connectionSecret('as-blind-operator', { user: operator });
  const wanted = stack.role('identity_required');
  await stack.resources.createPolicy('strict', {
    connection: { secretRef: { name: 'as-blind-operator' }, requirePhysicalIdentity: true },
    mode: 'apply',
    approval: 'auto',
    roles: [{ name: wanted, login: false }],
  });
  const refused = await waitFor(
    'Ready=False/PhysicalIdentityRequired',
    async () => {
      const p = await stack.resources.policy('strict');
      return condition(p?.status?.conditions, 'Ready')?.reason === 'PhysicalIdentityRequired' ? p : undefined;
    },
    { describe: policyStatus('strict') },
  );
  expect(condition(refused.status?.conditions, 'Ready')?.status).toBe('False');
  expect(refused.status?.last_error).toContain('requirePhysicalIdentity');
  await sleep(1000);
  expect(await stack.resources.plans('strict')).toHaveLength(0);
  expect(await roleExists(wanted)).toBe(false);

  // Without the requirement the same target runs on its logical identity alone.
  await stack.resources.patchPolicySpec('strict', {
    connection: { secretRef: { name: 'as-blind-operator' }, requirePhysicalIdentity: false },
  });
  await stack.reconciled('strict');
  expect(await roleExists(wanted)).toBe(true);
  const [applied] = (await stack.resources.plans('strict')).filter((p) => p.status?.phase === 'Applied');
  expect(applied?.status?.physicalIdentityAvailable).toBe(false);
  expect(applied?.status?.targetPhysicalIdentity ?? null).toBeNull();
}, 60_000);

test('a plan approved with a readable physical identity fails closed when it can no longer be read', async () => {
  const operator = stack.role('operator_seeing');
  await db.sql(`CREATE ROLE "${operator}" LOGIN CREATEROLE`);
  // Readable through the operator's own grant only, so revoking that grant makes it unreadable.
  await db.sql('REVOKE EXECUTE ON FUNCTION pg_control_system() FROM PUBLIC');
  await db.sql(`GRANT EXECUTE ON FUNCTION pg_control_system() TO "${operator}"`);
  await connectionSecret('as-seeing-operator', { user: operator });
  const wanted = stack.role('never_created');
  await stack.resources.createPolicy('reviewed', {
    connection: { secretRef: { name: 'as-seeing-operator' } },
    mode: 'plan',
    approval: 'manual',
    roles: [{ name: wanted, login: false }],
  });
  const pending = await waitFor(
    'a Pending plan with a physical identity',
    async () =>
      (await stack.resources.plans('reviewed')).find(
        (p) => p.status?.phase === 'Pending' && p.status.targetPhysicalIdentity,
      ),
    { describe: policyStatus('reviewed') },
  );
  expect(pending.status?.physicalIdentityAvailable).toBe(true);

  // Suspended while the identity goes away and the approval lands, so no pass in between can replace the
  // plan before it is approved: the approved plan itself must be refused.
  await stack.resources.patchPolicySpec('reviewed', { suspend: true });
  await waitFor('Paused=True', async () => {
    const p = await stack.resources.policy('reviewed');
    return condition(p?.status?.conditions, 'Paused')?.status === 'True';
  });
  await db.sql(`REVOKE EXECUTE ON FUNCTION pg_control_system() FROM "${operator}"`);
  await stack.resources.approve(pending.metadata.name!);
  await stack.resources.patchPolicySpec('reviewed', { suspend: false });

  // Whoever notices first (the planner revalidating the approved plan, or the executor under its lock)
  // fails the plan closed with the same reason.
  const refused = await waitFor(
    'the approved plan to fail closed',
    async () => {
      const p = await stack.resources.plan(pending.metadata.name!);
      return p?.status?.phase === 'Failed' || p?.status?.phase === 'Applied' ? p : undefined;
    },
    {
      timeoutMs: 30_000,
      describe: () => stack.resources.plan(pending.metadata.name!).then((p) => p?.status),
    },
  );
  expect(refused.status?.phase).toBe('Failed');
  expect(condition(refused.status?.conditions, 'Applied')).toMatchObject({
    status: 'False',
    reason: 'TargetIdentityUnavailable',
  });
  expect(refused.status?.lastError).toContain('the plan was not executed');
  expect(condition(refused.status?.conditions, 'Approved')?.status).toBe('True');
  expect(refused.status?.appliedAt ?? null).toBeNull();
  await sleep(1000);
  expect(await roleExists(wanted)).toBe(false);
}, 60_000);

test('a connection Secret created just before its policy is never reported missing', async () => {
  const recorder = await recordResourceEvents(stack.nats.url, 'postgrespolicy', stack.namespace, 'eager');
  await connectionSecret('fresh-secret', {});
  await stack.resources.createPolicy('eager', {
    connection: { secretRef: { name: 'fresh-secret' } },
    mode: 'apply',
    approval: 'auto',
    roles: [{ name: stack.role('eager'), login: false }],
  });
  await stack.reconciled('eager');
  const readyReasons = () =>
    recorder
      .events()
      .map(
        (e) => condition((e.object as { status?: { conditions?: [] } }).status?.conditions, 'Ready')?.reason,
      )
      .filter((reason): reason is string => reason !== undefined && reason !== null);
  // The API answered Reconciled; the gateway publishes that status change a moment later.
  await waitFor('the Reconciled status on the resource stream', async () =>
    readyReasons().includes('Reconciled') ? true : undefined,
  );
  await recorder.stop();
  const reasons = readyReasons();
  expect(reasons).not.toContain('SecretMissing');
  expect(reasons).not.toContain('SecretFetchFailed');
});
