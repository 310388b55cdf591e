// End to end, an execution interrupted in the middle of its transaction (issue 15): the executor killed
// (SIGKILL, no cleanup) while its plan is `Applying`, and the database connection cut under a running
// statement. A blocker session holds an uncommitted grant on the same table, so the executor's transaction
// is provably open (its backend waits on the blocker's tuple lock) when the fault strikes. Each database
// keeps a log written by an event trigger inside every transaction that runs DDL: rows of a transaction
// that rolled back vanish with it, so the log shows every execution that committed. In every case the plan
// ends with the truth of the database, its SQL commits exactly once, and the policy converges. The third
// case is the one the plan's `Applying` write exists for: the executor dies after its commit and before
// it wrote `Applied` (held there by its audit file, a FIFO nobody reads: the record is appended right after
// the commit, synchronously, before any status write or result).
import { execFileSync, type ChildProcess } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import type { PostgresPolicyPlan } from '@rolepolicy/kube';
import { freePort, spawnTs, startTcpProxy, type TcpProxy } from '@rolepolicy/testing';
import { condition, startStack, waitFor, type Stack, type TargetDatabase } from './stack.js';
import { watchExecuteResults, type ExecuteResultWatch } from './support/stream.js';

const EXECUTOR_MAIN = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../apps/executor/src/main.ts',
);

const SETUP_SQL = `
CREATE SCHEMA orders; CREATE TABLE orders.items (id int);
CREATE TABLE public.rp_commit_log (id bigserial PRIMARY KEY, txid bigint NOT NULL, tag text NOT NULL);
CREATE FUNCTION public.rp_commit_log() RETURNS event_trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO public.rp_commit_log (txid, tag) VALUES (txid_current(), tg_tag);
END $$;
CREATE EVENT TRIGGER rp_commit_log ON ddl_command_end EXECUTE FUNCTION public.rp_commit_log();`;

let stack: Stack;
let watch: ExecuteResultWatch;

beforeAll(async () => {
  stack = await startStack();
  watch = await watchExecuteResults(stack.nats.url);
}, 45_000);

afterAll(async () => {
  await watch?.close();
  await stack?.stop();
});

function policySpec(connection: unknown, prefix: string): Record<string, unknown> {
  return {
    connection,
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
    schemas: [{ name: 'orders', profiles: ['viewer'] }],
    roles: [{ name: `${prefix}app`, login: true }],
    memberships: [{ role: `${prefix}orders_viewer`, members: [{ name: `${prefix}app` }] }],
  };
}

/**
 * A session holding an uncommitted grant on `orders.items`: a grant on that table by anyone else waits for
 * it. Released by rolling back, so the waiting grant goes on (its own transaction decides its fate).
 */
async function holdTableGrant(db: TargetDatabase): Promise<pg.Client> {
  const blocker = new pg.Client({ connectionString: db.url });
  await blocker.connect();
  await blocker.query('BEGIN');
  await blocker.query('GRANT SELECT ON orders.items TO PUBLIC');
  return blocker;
}

/** Resolves once a backend of another session waits on a lock for a grant on `orders.items`. */
async function executorWaitsOnTheTable(db: TargetDatabase): Promise<void> {
  await waitFor('the executing transaction waiting on the blocker', async () => {
    const rows = await db.sql(
      `SELECT 1 FROM pg_stat_activity
        WHERE datname = current_database() AND wait_event_type = 'Lock' AND query ILIKE 'GRANT%items%'`,
    );
    return rows.length > 0;
  });
}

/** Resolves once no backend runs the policy's SQL any more (a dead client's backend ends its transaction). */
async function noExecutingBackend(db: TargetDatabase): Promise<void> {
  await waitFor('the interrupted transaction gone', async () => {
    const rows = await db.sql(
      `SELECT 1 FROM pg_stat_activity
        WHERE datname = current_database() AND pid <> pg_backend_pid() AND state <> 'idle'
          AND query ILIKE 'GRANT%'`,
    );
    return rows.length === 0;
  });
}

async function onlyPlan(policy: string, phase: string): Promise<PostgresPolicyPlan> {
  return waitFor(
    `${policy}: its plan ${phase}`,
    async () => {
      const plans = await stack.resources.plans(policy);
      return plans.length > 0 && plans.every((p) => p.status?.phase === phase) ? plans[0] : undefined;
    },
    { timeoutMs: 45_000 },
  );
}

async function committedExecutions(db: TargetDatabase): Promise<number> {
  const rows = await db.sql<{ n: string }>('SELECT count(DISTINCT txid) AS n FROM public.rp_commit_log');
  return Number(rows[0]!.n);
}

async function granted(db: TargetDatabase, prefix: string): Promise<boolean> {
  const rows = await db.sql<{ ok: boolean }>(
    `SELECT has_table_privilege($1, 'orders.items', 'SELECT') AS ok`,
    [`${prefix}orders_viewer`],
  );
  return rows[0]?.ok === true;
}

/** A child executor on the stack's NATS and API (the stack's own executor stopped first). */
async function childExecutor(env: Readonly<Record<string, string>> = {}): Promise<ChildProcess> {
  const port = await freePort();
  const child = spawnTs(EXECUTOR_MAIN, {
    env: {
      NATS_URL: stack.nats.url,
      KUBECONFIG: stack.emulator.kubeconfigPath,
      HTTP_HOST: '127.0.0.1',
      HTTP_PORT: String(port),
      LOG_LEVEL: 'error',
      ...env,
    },
  });
  await waitFor(
    'the child executor ready',
    async () => {
      const res = await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined);
      return res?.status === 200;
    },
    { timeoutMs: 60_000 },
  );
  return child;
}

const resultsOf = (plan: string) => watch.results.filter((r) => r.plan.name === plan);

const executedCount = (plan: string): number =>
  watch.results.filter((r) => r.plan.name === plan && r.phase === 'Applied' && r.reason === 'Executed')
    .length;

test('the executor killed (SIGKILL) while its plan is Applying: rolled back, then applied once by the next executor', async () => {
  const db = await stack.createDatabase('killed');
  await db.sql(SETUP_SQL);
  const prefix = stack.role('k_');
  await stack.stopServices(['executor']);
  const blocker = await holdTableGrant(db);
  let child: ChildProcess | undefined;
  try {
    child = await childExecutor();
    await stack.resources.createPolicy('killed', policySpec(db.connection, prefix));
    const applying = await onlyPlan('killed', 'Applying');
    await executorWaitsOnTheTable(db);

    child.kill('SIGKILL');
    await new Promise((resolve) => child!.once('exit', resolve));
    await blocker.query('ROLLBACK');
    await noExecutingBackend(db);
    // The truth of the database: nothing of the interrupted transaction committed, and the plan still says
    // Applying (nobody was left to write anything else).
    expect(await committedExecutions(db)).toBe(0);
    expect(await granted(db, prefix).catch(() => false)).toBe(false);
    expect((await stack.resources.plan(applying.metadata.name!))?.status?.phase).toBe('Applying');

    // The request was never acknowledged: a new executor gets it again once its ack deadline passes.
    await stack.startServices(['executor']);
    const reconciled = await stack.reconciled('killed', 75_000);
    expect(condition(reconciled.status?.conditions, 'Ready')?.status).toBe('True');
    const plans = await stack.resources.plans('killed');
    expect(plans.map((p) => [p.metadata.name, p.status?.phase])).toEqual([
      [applying.metadata.name, 'Applied'],
    ]);
    expect(await committedExecutions(db)).toBe(1);
    expect(await granted(db, prefix)).toBe(true);
    expect(executedCount(applying.metadata.name!)).toBe(1);
  } finally {
    if (child !== undefined && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await blocker.end().catch(() => undefined);
    await stack.startServices(['executor']);
  }
}, 180_000);

test('the database connection cut under a running statement: nothing committed, the plan fails, the policy converges', async () => {
  const db = await stack.createDatabase('cut');
  await db.sql(SETUP_SQL);
  const prefix = stack.role('c_');
  const proxy: TcpProxy = await startTcpProxy(Number(new URL(db.url).port || 5432));
  const viaProxy = new URL(db.url);
  viaProxy.port = String(proxy.port);
  await stack.core.createNamespacedSecret({
    namespace: stack.namespace,
    body: {
      metadata: { name: 'cut-via-proxy' },
      type: 'Opaque',
      stringData: { DATABASE_URL: viaProxy.toString() },
    },
  });
  const blocker = await holdTableGrant(db);
  try {
    await stack.resources.createPolicy('cut', policySpec({ secretRef: { name: 'cut-via-proxy' } }, prefix));
    const applying = await onlyPlan('cut', 'Applying');
    await executorWaitsOnTheTable(db);

    await proxy.cut();
    await blocker.query('ROLLBACK');
    await noExecutingBackend(db);
    const failed = await onlyPlan('cut', 'Failed');
    expect(failed.metadata.name).toBe(applying.metadata.name);
    expect(await committedExecutions(db)).toBe(0);
    expect(await granted(db, prefix).catch(() => false)).toBe(false);
    expect(executedCount(applying.metadata.name!)).toBe(0);

    await proxy.restore();
    await stack.resources.requestReconcile('cut');
    await stack.reconciled('cut', 60_000);
    const phases = (await stack.resources.plans('cut')).map((p) => p.status?.phase);
    expect(phases.filter((p) => p === 'Applied')).toHaveLength(1);
    expect(await committedExecutions(db)).toBe(1);
    expect(await granted(db, prefix)).toBe(true);
  } finally {
    await blocker.end().catch(() => undefined);
    await proxy.dispose();
  }
}, 150_000);

test('the executor killed after its commit and before it wrote Applied: the next executor completes the plan as Applied, never Superseded', async () => {
  const db = await stack.createDatabase('committed');
  await db.sql(SETUP_SQL);
  const prefix = stack.role('a_');
  await stack.stopServices(['executor']);
  // The child's audit file is a FIFO: readable at start (its start-up append needs a reader), then nobody
  // reads it, so the append of the Applied record right after the commit blocks the child for good.
  const dir = mkdtempSync(path.join(tmpdir(), 'rp-audit-fifo-'));
  const fifo = path.join(dir, 'audit.log');
  execFileSync('mkfifo', [fifo]);
  let reader: number | undefined = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
  let child: ChildProcess | undefined;
  try {
    child = await childExecutor({ AUDIT_LOG_FILE: fifo });
    closeSync(reader);
    reader = undefined;
    await stack.resources.createPolicy('committed', policySpec(db.connection, prefix));
    await waitFor('the execution committed', async () => (await committedExecutions(db)) === 1, {
      timeoutMs: 45_000,
    });
    const [plan] = await stack.resources.plans('committed');
    // Committed, and the child is stuck before its outcome: the plan still says Applying, no outcome went out.
    expect(plan?.status?.phase).toBe('Applying');
    expect(await granted(db, prefix)).toBe(true);
    expect(resultsOf(plan!.metadata.name!).map((r) => r.phase)).toEqual(['Applying']);

    child.kill('SIGKILL');
    await new Promise((resolve) => child!.once('exit', resolve));
    await stack.startServices(['executor']);
    const reconciled = await stack.reconciled('committed', 75_000);
    expect(condition(reconciled.status?.conditions, 'Ready')?.status).toBe('True');
    const plans = await stack.resources.plans('committed');
    expect(plans.map((p) => [p.metadata.name, p.status?.phase])).toEqual([[plan!.metadata.name, 'Applied']]);
    const outcomes = resultsOf(plan!.metadata.name!).filter((r) => r.phase !== 'Applying');
    expect(outcomes.map((r) => [r.phase, r.reason])).toEqual([['Applied', 'AlreadyConverged']]);
    expect(await committedExecutions(db)).toBe(1);
  } finally {
    if (reader !== undefined) closeSync(reader);
    if (child !== undefined && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    await stack.startServices(['executor']);
  }
}, 180_000);
