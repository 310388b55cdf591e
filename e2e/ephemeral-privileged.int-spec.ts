// End to end, privileged roles in ephemeral bundles (ADR 0021) through every service with the production NATS
// permissions: a bundle role the target declares privileged is refused by the access-scheduler before anyone
// asks (Accepted=False/PrivilegedRole), and one privileged only in the live database (made out of band) is
// refused by the executor under the lock, even when the tenant's access policy opts in: the operator has not
// listed the namespace. pg_auth_members shows nothing granted either way.
import { condition, startStack, waitFor, type Stack, type TargetDatabase } from './stack.js';
import { EphemeralResources } from './support/ephemeral.js';

let stack: Stack;
let db: TargetDatabase;
let eph: EphemeralResources;
let reader: string;
let files: string;
let ops: string;
let alice: string;

beforeAll(async () => {
  stack = await startStack({ natsAccessControl: true });
  db = await stack.createDatabase('privileged');
  eph = new EphemeralResources(stack.kubeConfig, stack.namespace);
  [reader, files, ops, alice] = ['reader', 'files', 'ops', 'alice'].map((r) => stack.role(r)) as [
    string,
    string,
    string,
    string,
  ];
  await stack.resources.createPolicy('orders', {
    connection: db.connection,
    mode: 'apply',
    approval: 'auto',
    roles: [
      { name: reader, login: false },
      { name: files, login: false },
      { name: ops, login: false },
      { name: alice, login: true },
      { name: 'pg_read_server_files', external: true },
    ],
    // Declared: files may read the server's files.
    memberships: [{ role: 'pg_read_server_files', members: [{ name: files }] }],
  });
  await stack.reconciled('orders');
  // Out of band, invisible to the policy and the scheduler: ops may run programs on the server.
  await db.sql(`GRANT pg_execute_server_program TO "${ops}"`);
}, 60_000);

// On the secured NATS a service's close has been seen to take over a minute (cause open, docs/next-steps).
afterAll(async () => {
  await stack?.stop();
}, 180_000);

function accessPolicy(role: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    approval: { mode: 'Automatic' },
    justification: { required: false },
    maximumDuration: '1h',
    defaultDuration: '10m',
    postgresPolicyRef: { name: 'orders' },
    memberships: [{ role, inherit: true }],
    ...extra,
  };
}

function request(policy: string): Record<string, unknown> {
  return {
    accessPolicyRef: { name: policy },
    subject: { role: alice },
    requestedBy: { username: 'alice@example.com' },
  };
}

async function isMember(role: string, member: string): Promise<boolean> {
  const rows = await db.sql(
    `SELECT 1 FROM pg_auth_members m JOIN pg_roles r ON r.oid = m.roleid JOIN pg_roles u ON u.oid = m.member
      WHERE r.rolname = $1 AND u.rolname = $2`,
    [role, member],
  );
  return rows.length === 1;
}

test('a role the target declares privileged: the access policy is not Accepted and a request resolves to nothing', async () => {
  await eph.create('EphemeralAccessPolicy', 'declared', accessPolicy(files));
  const policy = await waitFor('access policy declared judged', async () => {
    const p = await eph.accessPolicy('declared');
    return condition(p?.status?.conditions, 'Accepted') === undefined ? undefined : p;
  });
  const accepted = condition(policy.status?.conditions, 'Accepted');
  expect(accepted).toMatchObject({ status: 'False', reason: 'PrivilegedRole' });
  expect(accepted?.message).toContain(
    `role ${files} is a member of pg_read_server_files, which is a predefined role`,
  );
  expect(accepted?.message).toContain('spec.allowPrivilegedRoles is not true');

  await eph.create('EphemeralAccessRequest', 'declared-1', request('declared'));
  const pending = await waitFor('request declared-1 refused at resolution', async () => {
    const r = await eph.request('declared-1');
    return r?.status?.lastError?.includes('PrivilegedRole') ? r : undefined;
  });
  expect(pending.status?.phase ?? 'Pending').toBe('Pending');
  expect(pending.status?.resolvedAccess ?? null).toBeNull();
  expect(await isMember(files, alice)).toBe(false);
});

test('a role privileged only in the database: the executor refuses the Activate, even with the tenant opt-in, and grants nothing', async () => {
  // The tenant opts in, but the operator lists no namespace (EPHEMERAL_ACCESS_PRIVILEGED_NAMESPACES unset).
  await eph.create('EphemeralAccessPolicy', 'live', accessPolicy(ops, { allowPrivilegedRoles: true }));
  await waitFor(
    'access policy live Accepted (the target declares nothing privileged)',
    async () =>
      condition((await eph.accessPolicy('live'))?.status?.conditions, 'Accepted')?.status === 'True',
  );
  await eph.create('EphemeralAccessRequest', 'live-1', request('live'));
  const failed = await eph.phase('live-1', 'Failed', 40_000);
  expect(failed.status?.lastError).toContain(
    `role ${ops} is a member of pg_execute_server_program, which is a predefined role`,
  );
  expect(failed.status?.lastError).toContain(
    `the operator does not allow privileged roles in namespace ${stack.namespace}`,
  );
  expect(await isMember(ops, alice)).toBe(false);
  expect(await isMember('pg_execute_server_program', alice)).toBe(false);
});
