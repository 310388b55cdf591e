// End to end, names with dots (issue 18): a PostgresPolicy named `app.prod` whose connection Secret and
// password Secret have dotted names (as other PostgreSQL operators name theirs) converges to Ready=True
// through gateway -> planner -> inspector -> executor, and the database holds what it declares.
import { scramSha256Verifier } from '@rolepolicy/policy';
import { lastResourceEvent } from './support/stream.js';
import { condition, startStack, type Stack, type TargetDatabase } from './stack.js';

let stack: Stack;
let db: TargetDatabase;
const connectionSecret = 'owner.cluster.credentials.postgresql.example.com';
const passwordSecret = 'app.prod.passwords';

beforeAll(async () => {
  stack = await startStack();
  db = await stack.createDatabase('dotted', connectionSecret);
  await db.sql('CREATE SCHEMA orders; CREATE TABLE orders.items (id int)');
}, 45_000);

afterAll(async () => {
  await stack?.stop();
});

test('a policy named app.prod with dotted Secret names converges, and its roles land in PostgreSQL', async () => {
  const app = stack.role('dotted_app');
  const reader = stack.role('dotted_reader');
  const password = 'dotted-Password-0001';
  await stack.core.createNamespacedSecret({
    namespace: stack.namespace,
    body: { metadata: { name: passwordSecret }, type: 'Opaque', stringData: { [app]: password } },
  });
  await stack.resources.createPolicy('app.prod', {
    connection: db.connection,
    mode: 'apply',
    approval: 'auto',
    roles: [
      { name: reader, login: false },
      { name: app, login: true, password: { secretRef: { name: passwordSecret } } },
    ],
    grants: [
      { role: reader, object: { type: 'schema', name: 'orders' }, privileges: ['USAGE'] },
      { role: reader, object: { type: 'table', schema: 'orders', name: '*' }, privileges: ['SELECT'] },
    ],
    memberships: [{ role: reader, members: [{ name: app }] }],
  });

  const policy = await stack.reconciled('app.prod', 40_000);
  expect(condition(policy.status?.conditions, 'Ready')).toMatchObject({
    status: 'True',
    reason: 'Reconciled',
  });
  expect(policy.status?.observed_generation).toBe(policy.metadata.generation);
  expect([...(policy.status?.owned_roles ?? [])].sort()).toEqual([app, reader].sort());
  expect(Object.keys(policy.status?.applied_password_source_versions ?? {})).toEqual([app]);

  // The database: the roles, the grants on the table, the membership, and the password from the dotted Secret.
  const [state] = await db.sql<Record<string, boolean>>(
    `SELECT has_table_privilege($1, 'orders.items', 'SELECT') AS reader_select,
            has_table_privilege($1, 'orders.items', 'INSERT') AS reader_insert,
            pg_has_role($2, $1, 'MEMBER') AS app_is_reader,
            (SELECT rolcanlogin FROM pg_roles WHERE rolname = $2) AS app_login`,
    [reader, app],
  );
  expect(state).toEqual({ reader_select: true, reader_insert: false, app_is_reader: true, app_login: true });
  const [auth] = await db.sql<{ rolpassword: string }>(
    'SELECT rolpassword FROM pg_authid WHERE rolname = $1',
    [app],
  );
  const match = /^SCRAM-SHA-256\$(\d+):([^$]+)\$/.exec(auth?.rolpassword ?? '');
  expect(match).not.toBeNull();
  expect(scramSha256Verifier(password, Buffer.from(match![2]!, 'base64'), Number(match![1]))).toBe(
    auth?.rolpassword,
  );

  // On the bus, under the encoded subjects: the policy and both dotted Secrets.
  const published = await lastResourceEvent(stack.nats.url, 'postgrespolicy', stack.namespace, 'app.prod');
  expect(published?.object.metadata.name).toBe('app.prod');
  const secret = await lastResourceEvent(stack.nats.url, 'secret', stack.namespace, connectionSecret);
  expect(secret?.object.metadata.name).toBe(connectionSecret);

  // The plan it applied belongs to the dotted policy.
  const applied = (await stack.resources.plans('app.prod')).filter((p) => p.status?.phase === 'Applied');
  expect(applied.length).toBeGreaterThanOrEqual(1);
  expect(applied[0]!.spec.policyRef.name).toBe('app.prod');
}, 60_000);
