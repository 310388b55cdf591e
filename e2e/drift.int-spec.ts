// End to end, level-triggered convergence: drift injected by raw SQL behind the product's back is found
// and repaired at the policy's next interval with no edit or annotation; and of two policies claiming the
// same role on one database, the later one yields with a Conflict condition until the claim is dropped.
// Drift behind a converged policy confirmed by catalog fingerprint is found the same way.
import { condition, sleep, startStack, waitFor, type Stack, type TargetDatabase } from './stack.js';
import { metricSums } from './support/metrics.js';

let stack: Stack;
let db: TargetDatabase;

beforeAll(async () => {
  stack = await startStack();
  db = await stack.createDatabase('drift');
  await db.sql(`CREATE SCHEMA ledger; CREATE TABLE ledger.entries (id int);
                CREATE SCHEMA books; CREATE TABLE books.pages (id int)`);
}, 45_000);

afterAll(async () => {
  await stack?.stop();
});

const policyStatus = (name: string) => () => stack.resources.policy(name).then((p) => p?.status);

/** How many inspections the inspector answered `unchanged` (a converged pass confirmed by fingerprint). */
async function unchangedInspections(): Promise<number> {
  const url = stack.services.find((s) => s.name === 'inspector')!.url;
  return (await metricSums(url, 'rp_inspect_requests_total', 'outcome'))['unchanged'] ?? 0;
}

async function roleExists(role: string): Promise<boolean> {
  return (await db.sql('SELECT 1 FROM pg_roles WHERE rolname = $1', [role])).length === 1;
}

test('drift injected by raw SQL is repaired at the next interval, with no edit or annotation', async () => {
  const reader = stack.role('ledger_reader');
  await stack.resources.createPolicy('ledger', {
    connection: db.connection,
    mode: 'apply',
    approval: 'auto',
    interval: '2s',
    roles: [{ name: reader, login: false, comment: 'reads the ledger' }],
    grants: [
      { role: reader, object: { type: 'schema', name: 'ledger' }, privileges: ['USAGE'] },
      { role: reader, object: { type: 'table', schema: 'ledger', name: 'entries' }, privileges: ['SELECT'] },
    ],
  });
  const before = await stack.reconciled('ledger');
  const generation = before.metadata.generation;

  // Someone with a superuser shell "fixes" things by hand.
  await db.sql(`REVOKE SELECT ON ledger.entries FROM "${reader}"`);
  await db.sql(`ALTER ROLE "${reader}" CREATEDB`);
  await db.sql(`GRANT INSERT ON ledger.entries TO "${reader}"`);

  const repaired = await waitFor(
    'the drift to be repaired by a later Applied plan',
    async () => {
      const [row] = await db.sql<{ can_select: boolean; can_insert: boolean; createdb: boolean }>(
        `SELECT has_table_privilege($1, 'ledger.entries', 'SELECT') AS can_select,
                has_table_privilege($1, 'ledger.entries', 'INSERT') AS can_insert,
                (SELECT rolcreatedb FROM pg_roles WHERE rolname = $1) AS createdb`,
        [reader],
      );
      return row?.can_select && !row.can_insert && !row.createdb ? row : undefined;
    },
    { timeoutMs: 30_000, describe: policyStatus('ledger') },
  );
  expect(repaired).toEqual({ can_select: true, can_insert: false, createdb: false });

  // The repair plan's Applied is written after its commit (which the query above already sees); the policy
  // may show the Reconciled of before all along, since an apply under a second writes no Applying status.
  const repair = await waitFor(
    'the repair plan to show Applied',
    async () =>
      (await stack.resources.plans('ledger')).find(
        (p) => p.status?.phase === 'Applied' && (p.status?.changeSummary?.grants_revoked ?? 0) > 0,
      ),
    { timeoutMs: 30_000, describe: policyStatus('ledger') },
  );
  const after = await stack.reconciled('ledger');
  expect(after.metadata.generation).toBe(generation); // nobody edited the policy
  expect(repair?.status?.changeSummary).toMatchObject({
    grants_added: 1,
    grants_revoked: 1,
    roles_altered: 1,
  });
  expect(condition(after.status?.conditions, 'Drifted')).toMatchObject({ status: 'False' });
}, 60_000);

test('two policies claiming one role: the later yields with Conflict and plans nothing until it drops the claim', async () => {
  const shared = stack.role('shared_app');
  const onlyLater = stack.role('later_only');
  await stack.resources.createPolicy('first-claim', {
    connection: db.connection,
    mode: 'apply',
    approval: 'auto',
    roles: [{ name: shared, login: false }],
  });
  await stack.reconciled('first-claim');
  // Creation timestamps have one-second resolution; seniority must not depend on the tie-break.
  await sleep(1100);
  await stack.resources.createPolicy('second-claim', {
    connection: db.connection,
    mode: 'apply',
    approval: 'auto',
    roles: [
      { name: shared, login: true },
      { name: onlyLater, login: false },
    ],
  });

  const blocked = await waitFor(
    'second-claim: Conflict=True',
    async () => {
      const p = await stack.resources.policy('second-claim');
      return condition(p?.status?.conditions, 'Conflict')?.status === 'True' ? p : undefined;
    },
    { describe: policyStatus('second-claim') },
  );
  expect(condition(blocked.status?.conditions, 'Conflict')?.message).toContain(
    `${stack.namespace}/first-claim`,
  );
  expect(condition(blocked.status?.conditions, 'Conflict')?.message).toContain(shared);
  expect(condition(blocked.status?.conditions, 'Ready')).toMatchObject({ status: 'False' });
  await sleep(1000);
  expect(await stack.resources.plans('second-claim')).toHaveLength(0);
  expect(await roleExists(onlyLater)).toBe(false);
  // The earlier policy keeps its role as declared (the later one's login: true never ran).
  const [shape] = await db.sql<{ rolcanlogin: boolean }>(
    'SELECT rolcanlogin FROM pg_roles WHERE rolname = $1',
    [shared],
  );
  expect(shape?.rolcanlogin).toBe(false);
  expect(
    condition((await stack.resources.policy('first-claim'))?.status?.conditions, 'Conflict')?.status,
  ).not.toBe('True');

  // Dropping the overlapping claim clears the conflict and the later policy converges.
  await stack.resources.patchPolicySpec('second-claim', { roles: [{ name: onlyLater, login: false }] });
  const cleared = await stack.reconciled('second-claim');
  expect(condition(cleared.status?.conditions, 'Conflict')?.status ?? 'False').toBe('False');
  expect(await roleExists(onlyLater)).toBe(true);
}, 60_000);

test('drift behind a converged policy confirmed by fingerprint (a new table in a wildcard schema, a revoke) is repaired', async () => {
  const reader = stack.role('books_reader');
  await stack.resources.createPolicy('books', {
    connection: db.connection,
    mode: 'apply',
    approval: 'auto',
    interval: '1s',
    roles: [{ name: reader, login: false }],
    grants: [
      { role: reader, object: { type: 'schema', name: 'books' }, privileges: ['USAGE'] },
      { role: reader, object: { type: 'table', schema: 'books', name: '*' }, privileges: ['SELECT'] },
    ],
  });
  await stack.reconciled('books');
  // Passes confirmed by fingerprint alone: the converged policy's catalog is no longer transferred or diffed.
  const confirmed = await unchangedInspections();
  await waitFor(
    'a pass confirmed by fingerprint',
    async () => (await unchangedInspections()) >= confirmed + 2,
    {
      timeoutMs: 20_000,
      describe: policyStatus('books'),
    },
  );

  await db.sql(`CREATE TABLE books.chapters (id int); REVOKE SELECT ON books.pages FROM "${reader}"`);
  const repaired = await waitFor(
    'the new table granted and the revoke repaired',
    async () => {
      const [row] = await db.sql<{ chapters: boolean; pages: boolean }>(
        `SELECT has_table_privilege($1, 'books.chapters', 'SELECT') AS chapters,
                has_table_privilege($1, 'books.pages', 'SELECT') AS pages`,
        [reader],
      );
      return row?.chapters && row.pages ? row : undefined;
    },
    { timeoutMs: 30_000, describe: policyStatus('books') },
  );
  expect(repaired).toEqual({ chapters: true, pages: true });
  const applied = (await stack.resources.plans('books')).filter((p) => p.status?.phase === 'Applied');
  expect(applied.some((p) => (p.status?.changeSummary?.grants_added ?? 0) >= 2)).toBe(true);
  // And converged again, the policy goes back to fingerprint-only passes.
  const after = await unchangedInspections();
  await waitFor('fingerprint-only passes again', async () => (await unchangedInspections()) > after, {
    timeoutMs: 20_000,
  });
}, 90_000);
