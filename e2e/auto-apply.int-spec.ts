// End to end, apply mode with automatic approval: a policy with profiles x schemas and a login role with a
// generated password converges on the database through gateway -> planner -> inspector -> executor, the
// plan ends Applied with the planner's auto-approval, and the status says Reconciled at the policy's generation.
import { generatedSecretName } from '@rolepolicy/kube';
import { scramSha256Verifier } from '@rolepolicy/policy';
import { condition, startStack, waitFor, type Stack, type TargetDatabase } from './stack.js';

let stack: Stack;
let db: TargetDatabase;

beforeAll(async () => {
  stack = await startStack();
  db = await stack.createDatabase('auto');
  await db.sql('CREATE SCHEMA orders; CREATE TABLE orders.items (id int)');
}, 45_000);

afterAll(async () => {
  await stack?.stop();
});

test('an apply/auto policy converges: roles, grants and a generated password land in PostgreSQL', async () => {
  const app = stack.role('app');
  const viewer = stack.role('orders_viewer');
  const editor = stack.role('orders_editor');
  await stack.resources.createPolicy('shop', {
    connection: db.connection,
    mode: 'apply',
    approval: 'auto',
    role_pattern: `${stack.rolePrefix}{schema}_{profile}`,
    profiles: {
      viewer: {
        grants: [
          { object: { type: 'schema' }, privileges: ['USAGE'] },
          { object: { type: 'table', name: '*' }, privileges: ['SELECT'] },
        ],
      },
      editor: {
        grants: [
          { object: { type: 'schema' }, privileges: ['USAGE'] },
          { object: { type: 'table', name: '*' }, privileges: ['SELECT', 'INSERT', 'UPDATE', 'DELETE'] },
        ],
      },
    },
    schemas: [{ name: 'orders', profiles: ['viewer', 'editor'] }],
    roles: [{ name: app, login: true, password: { generate: { length: 24 } } }],
    grants: [{ role: app, object: { type: 'database', name: db.database }, privileges: ['CONNECT'] }],
    memberships: [{ role: editor, members: [{ name: app }] }],
  });

  const policy = await waitFor(
    'the policy to report Ready=True/Reconciled',
    async () => {
      const p = await stack.resources.policy('shop');
      const ready = condition(p?.status?.conditions, 'Ready');
      return ready?.status === 'True' && ready.reason === 'Reconciled' ? p : undefined;
    },
    { timeoutMs: 40_000, describe: () => stack.resources.policy('shop').then((p) => p?.status) },
  );
  expect(policy.status?.observed_generation).toBe(policy.metadata.generation);
  expect(condition(policy.status?.conditions, 'Drifted')).toMatchObject({ status: 'False' });
  expect([...(policy.status?.owned_roles ?? [])].sort()).toEqual([app, editor, viewer].sort());
  expect(policy.status?.last_error ?? null).toBeNull();

  // The database: roles, privileges, membership.
  const [privileges] = await db.sql<Record<string, boolean>>(
    `SELECT has_table_privilege($1, 'orders.items', 'SELECT') AS viewer_select,
            has_table_privilege($1, 'orders.items', 'INSERT') AS viewer_insert,
            has_table_privilege($2, 'orders.items', 'INSERT') AS editor_insert,
            has_schema_privilege($1, 'orders', 'USAGE') AS viewer_usage,
            has_database_privilege($3, current_database(), 'CONNECT') AS app_connect,
            pg_has_role($3, $2, 'MEMBER') AS app_is_editor`,
    [viewer, editor, app],
  );
  expect(privileges).toEqual({
    viewer_select: true,
    viewer_insert: false,
    editor_insert: true,
    viewer_usage: true,
    app_connect: true,
    app_is_editor: true,
  });

  // The generated password: a Secret owned by the policy whose password matches the role's SCRAM verifier.
  const secret = await stack.core.readNamespacedSecret({
    namespace: stack.namespace,
    name: generatedSecretName('shop', app),
  });
  expect(secret.metadata?.ownerReferences?.[0]).toMatchObject({ kind: 'PostgresPolicy', name: 'shop' });
  const password = Buffer.from(secret.data?.['password'] ?? '', 'base64').toString('utf8');
  expect(password).toHaveLength(24);
  const [auth] = await db.sql<{ rolpassword: string; rolcanlogin: boolean }>(
    'SELECT rolpassword, rolcanlogin FROM pg_authid WHERE rolname = $1',
    [app],
  );
  expect(auth?.rolcanlogin).toBe(true);
  const match = /^SCRAM-SHA-256\$(\d+):([^$]+)\$/.exec(auth?.rolpassword ?? '');
  expect(match).not.toBeNull();
  const recomputed = scramSha256Verifier(password, Buffer.from(match![2]!, 'base64'), Number(match![1]));
  expect(auth?.rolpassword).toBe(recomputed);
  // The cleartext never reaches the status.
  expect(JSON.stringify(policy.status)).not.toContain(password);

  // The plan: applied under the planner's auto-approval.
  const plans = await stack.resources.plans('shop');
  const applied = plans.filter((p) => p.status?.phase === 'Applied');
  expect(applied).toHaveLength(1);
  expect(condition(applied[0]!.status?.conditions, 'Approved')).toMatchObject({
    status: 'True',
    reason: 'AutoApproved',
  });
  expect(applied[0]!.status?.decidedBy?.username).toBe('system:rolepolicy-planner(auto-approval)');
  expect(applied[0]!.status?.sqlInline).not.toContain(password);
  expect(applied[0]!.status?.appliedAt).toBeTruthy();
}, 55_000);
