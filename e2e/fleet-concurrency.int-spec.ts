// Concurrent execution through the whole product: two executor replicas, each running several requests at
// once (EXECUTOR_CONCURRENCY), converge 20 databases that carry two policies each. Every target database
// keeps a lock-holder log written by an event trigger inside each executing transaction (one row per DDL
// statement with the transaction id), so the test sees from the databases themselves that no two
// executions on one database ever overlapped, and from the result stream that every plan ran exactly once.
import { startStack, type Stack, type TargetDatabase } from './stack.js';
import { watchExecuteResults, type ExecuteResultWatch } from './support/stream.js';

const DATABASES = 20;
const POLICIES_PER_DATABASE = 2;

const LOCK_LOG_SQL = `
CREATE TABLE public.rp_lock_log (id bigserial PRIMARY KEY, txid bigint NOT NULL, tag text NOT NULL,
                                 at timestamptz NOT NULL);
CREATE FUNCTION public.rp_lock_log() RETURNS event_trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO public.rp_lock_log (txid, tag, at) VALUES (txid_current(), tg_tag, clock_timestamp());
END $$;
CREATE EVENT TRIGGER rp_lock_log ON ddl_command_end EXECUTE FUNCTION public.rp_lock_log();`;

let stack: Stack;
let watch: ExecuteResultWatch;

beforeAll(async () => {
  stack = await startStack({ executors: 2, env: { EXECUTOR_CONCURRENCY: '4' } });
  watch = await watchExecuteResults(stack.nats.url);
}, 45_000);

afterAll(async () => {
  await watch?.close();
  await stack?.stop();
});

/** Policy `k` of a database: its own roles and schemas, so the two policies never conflict. */
function policySpec(db: TargetDatabase, prefix: string, k: number): Record<string, unknown> {
  return {
    connection: db.connection,
    mode: 'apply',
    approval: 'auto',
    role_pattern: `${prefix}{schema}_{profile}`,
    profiles: {
      viewer: {
        grants: [
          { object: { type: 'schema' }, privileges: ['USAGE'] },
          { object: { type: 'table', name: '*' }, privileges: ['SELECT'] },
        ],
      },
    },
    schemas: [
      { name: `s${k}_orders`, profiles: ['viewer'] },
      { name: `s${k}_billing`, profiles: ['viewer'] },
    ],
    roles: [{ name: `${prefix}app`, login: true }],
    memberships: [{ role: `${prefix}s${k}_orders_viewer`, members: [{ name: `${prefix}app` }] }],
  };
}

test(`two executors x ${DATABASES} databases: no overlapping executions on a database, every plan once`, async () => {
  const dbs = await Promise.all(
    Array.from({ length: DATABASES }, async (_, i) => {
      const db = await stack.createDatabase(`fleet${i}`);
      const tables = Array.from(
        { length: POLICIES_PER_DATABASE },
        (_, k) =>
          `CREATE SCHEMA s${k}_orders; CREATE TABLE s${k}_orders.items (id int);
           CREATE SCHEMA s${k}_billing; CREATE TABLE s${k}_billing.invoices (id int);`,
      ).join('\n');
      await db.sql(`${tables}\n${LOCK_LOG_SQL}`);
      return db;
    }),
  );
  const names: string[] = [];
  await Promise.all(
    dbs.flatMap((db, i) =>
      Array.from({ length: POLICIES_PER_DATABASE }, (_, k) => {
        const name = `fleet-${i}-${k}`;
        names.push(name);
        return stack.resources.createPolicy(name, policySpec(db, stack.role(`d${i}p${k}_`), k));
      }),
    ),
  );
  for (const name of names) await stack.reconciled(name, 50_000);

  // Every policy's plan is Applied, and each plan was executed (SQL run) exactly once.
  const executed = new Map<string, number>();
  for (const r of watch.results) {
    if (r.phase === 'Applied' && r.reason === 'Executed') {
      executed.set(r.plan.name, (executed.get(r.plan.name) ?? 0) + 1);
    }
  }
  const appliedPlans: string[] = [];
  for (const name of names) {
    const plans = await stack.resources.plans(name);
    expect(plans.map((p) => p.status?.phase)).toEqual(['Applied']);
    appliedPlans.push(plans[0]!.metadata.name!);
  }
  expect(Object.fromEntries(appliedPlans.map((p) => [p, executed.get(p)]))).toEqual(
    Object.fromEntries(appliedPlans.map((p) => [p, 1])),
  );
  expect(executed.size).toBe(appliedPlans.length);

  // From each database's own log: one executing transaction per policy, and their DDL never interleaved.
  for (const db of dbs) {
    const spans = await db.sql<{ txid: string; first: Date; last: Date }>(
      'SELECT txid, min(at) AS first, max(at) AS last FROM public.rp_lock_log GROUP BY txid ORDER BY min(at)',
    );
    expect(spans).toHaveLength(POLICIES_PER_DATABASE);
    for (let i = 1; i < spans.length; i++) {
      expect(spans[i]!.first.getTime()).toBeGreaterThanOrEqual(spans[i - 1]!.last.getTime());
    }
  }
}, 120_000);
