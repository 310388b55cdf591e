// Executor against real NATS and PostgreSQL: approved plans converge, drifted ones are refused, two
// replicas never run on one database at once, and a failing statement rolls everything back.
import type { INestApplication } from '@nestjs/common';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import pg from 'pg';
import type { ExecuteResultV1 } from '@rolepolicy/contracts';
import type { PolicyContent } from '@rolepolicy/policy';
import {
  createNatsSandbox,
  createPostgresSandbox,
  eventually,
  sandboxId,
  type NatsSandbox,
  type PostgresSandbox,
} from '@rolepolicy/testing';
import {
  LOCK_LOG_DDL,
  approvedRequest,
  collectResults,
  executorTopology,
  publishRaw,
  publishRequest,
  startExecutor,
  type ExecutorTopology,
  type SecretStore,
} from './test-support/harness.js';

const DATABASES = 20;
const run = sandboxId();

async function query<T extends pg.QueryResultRow>(
  url: string,
  text: string,
  values: unknown[] = [],
): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(text, values)).rows;
  } finally {
    await client.end();
  }
}

function policyFor(role: string): PolicyContent {
  return {
    roles: [{ name: role, login: false, config: {} }],
    schemas: [{ name: 'app' }],
    grants: [{ role, privileges: ['USAGE'], object: { type: 'schema', name: 'app' } }],
  };
}

async function schemaUsage(url: string, role: string): Promise<boolean> {
  const rows = await query<{ ok: boolean | null }>(
    url,
    `SELECT CASE WHEN to_regnamespace('app') IS NULL THEN NULL ELSE has_schema_privilege($1, 'app', 'USAGE') END AS ok`,
    [role],
  );
  return rows[0]?.ok === true;
}

async function roleExists(url: string, role: string): Promise<boolean> {
  return (await query(url, 'SELECT 1 FROM pg_roles WHERE rolname = $1', [role])).length === 1;
}

describe('executor: rp.execute.request under the per-database lock', () => {
  let sandbox: NatsSandbox;
  let nc: NatsConnection;
  let names: ExecutorTopology;
  let results: ExecuteResultV1[];
  let stopResults: () => void = () => undefined;
  const secrets: SecretStore = { connections: new Map(), passwords: new Map() };
  const databases: PostgresSandbox[] = [];
  const roles: string[] = [];
  const apps: INestApplication[] = [];

  async function database(label: string): Promise<PostgresSandbox> {
    const db = await createPostgresSandbox(label);
    databases.push(db);
    await query(db.url, LOCK_LOG_DDL);
    return db;
  }

  function role(label: string): string {
    const name = `rpx_${run}_${label}`;
    roles.push(name);
    return name;
  }

  function resultsOf(plan: string): ExecuteResultV1[] {
    return results.filter((r) => r.plan.name === plan);
  }

  async function finalResults(plan: string, count = 1): Promise<ExecuteResultV1[]> {
    return eventually(
      `${count} final result(s) of ${plan}`,
      () => {
        const done = resultsOf(plan).filter((r) => r.phase !== 'Applying');
        return done.length >= count ? done : undefined;
      },
      60_000,
    );
  }

  beforeAll(async () => {
    sandbox = await createNatsSandbox();
    nc = await connect({ servers: sandbox.url });
    names = executorTopology(sandbox);
    ({ results, stop: stopResults } = await collectResults(nc, names));
    apps.push(await startExecutor(names, sandbox.url, secrets, 'replica-a'));
    apps.push(await startExecutor(names, sandbox.url, secrets, 'replica-b'));
  }, 60_000);

  afterAll(async () => {
    await Promise.all(apps.map((app) => app.close().catch(() => undefined)));
    stopResults();
    await nc?.close();
    await sandbox?.cleanup();
    await Promise.all(databases.map((db) => db.drop().catch(() => undefined)));
    for (const name of roles) {
      await query('postgres://postgres@127.0.0.1:5432/postgres', `DROP ROLE IF EXISTS "${name}"`).catch(
        () => undefined,
      );
    }
  }, 120_000);

  it('an approved request converges the database and reports Applied with the executed digest', async () => {
    const db = await database('exec_ok');
    const name = role('ok');
    const { request, changeCount } = await approvedRequest({
      secrets,
      url: db.url,
      planName: 'plan-ok',
      content: policyFor(name),
    });
    expect(changeCount).toBeGreaterThan(0);
    await publishRequest(nc, names, request);
    const [result] = await finalResults('plan-ok');
    expect(result).toMatchObject({
      phase: 'Applied',
      reason: 'Executed',
      approvedDigest: request.changeDigest,
      executedDigest: request.changeDigest,
    });
    expect(result?.statementCount).toBeGreaterThan(0);
    expect(result?.appliedAt).toBeDefined();
    expect(resultsOf('plan-ok').map((r) => r.phase)).toEqual(['Applying', 'Applied']);
    expect(await schemaUsage(db.url, name)).toBe(true);
  });

  it("a database owner's session settings change no statement: a hostile comment is stored as reviewed, nothing injected runs", async () => {
    const db = await database('exec_hostile_settings');
    const name = role('hostile');
    const pwned = role('pwned');
    const owner = role('owner');
    await query(
      db.adminUrl,
      `CREATE ROLE "${owner}" LOGIN; ALTER DATABASE "${db.database}" OWNER TO "${owner}"`,
    );
    const asOwner = new URL(db.url);
    asOwner.username = owner;
    // What the owner of a database may do to every session that connects to it (ADR 0023).
    await query(
      asOwner.toString(),
      `ALTER DATABASE "${db.database}" SET standard_conforming_strings = off;
       ALTER DATABASE "${db.database}" SET search_path = "$user", public, pg_catalog;`,
    );
    // With standard_conforming_strings off the literal would end after `\'` and the rest run as the executor.
    const comment = `x\\'; CREATE ROLE "${pwned}" SUPERUSER; --`;
    const { request } = await approvedRequest({
      secrets,
      url: db.url,
      planName: 'plan-hostile-settings',
      content: { roles: [{ name, comment }] },
    });
    await publishRequest(nc, names, request);
    const [result] = await finalResults('plan-hostile-settings');
    expect(result).toMatchObject({ phase: 'Applied', reason: 'Executed' });
    const stored = await query<{ comment: string | null }>(
      db.url,
      "SELECT pg_catalog.shobj_description(oid, 'pg_authid') AS comment FROM pg_catalog.pg_roles WHERE rolname = $1",
      [name],
    );
    expect(stored).toEqual([{ comment }]);
    expect(await roleExists(db.url, pwned)).toBe(false);
  });

  it('a redelivered, already applied request runs no SQL and reports Applied (AlreadyConverged)', async () => {
    const db = await database('exec_redeliver');
    const name = role('redeliver');
    const { request } = await approvedRequest({
      secrets,
      url: db.url,
      planName: 'plan-redeliver',
      content: policyFor(name),
    });
    await publishRequest(nc, names, request);
    await finalResults('plan-redeliver', 1);
    await publishRequest(nc, names, request);
    const final = await finalResults('plan-redeliver', 2);
    expect(final.map((r) => r.reason)).toEqual(['Executed', 'AlreadyConverged']);
    expect(final[1]?.statementCount).toBe(0);
    expect(await query(db.url, "SELECT 1 FROM public.rp_lock_log WHERE event = 'enter'")).toHaveLength(1);
  });

  it('drift between plan and execution: the approved digest no longer matches, Superseded, nothing executed', async () => {
    const db = await database('exec_drift');
    const name = role('drift');
    const { request } = await approvedRequest({
      secrets,
      url: db.url,
      planName: 'plan-drift',
      content: policyFor(name),
    });
    // Someone creates the schema by hand after approval: the re-plan differs from the approved one.
    await query(db.url, 'CREATE SCHEMA app');
    await publishRequest(nc, names, request);
    const [result] = await finalResults('plan-drift');
    expect(result).toMatchObject({
      phase: 'Superseded',
      reason: 'DigestMismatch',
      executedDigest: null,
      statementCount: 0,
    });
    expect(result?.recomputedDigest).not.toBe(request.changeDigest);
    expect(await roleExists(db.url, name)).toBe(false);
    expect(await query(db.url, 'SELECT 1 FROM public.rp_lock_log')).toHaveLength(0);
    expect(resultsOf('plan-drift').some((r) => r.phase === 'Applying')).toBe(false);
  });

  it("a request whose digest encoding differs from the executor's is refused, nothing executed", async () => {
    const db = await database('exec_encoding');
    const name = role('encoding');
    const { request } = await approvedRequest({
      secrets,
      url: db.url,
      planName: 'plan-encoding',
      content: policyFor(name),
    });
    await publishRequest(nc, names, { ...request, changeDigestEncoding: 'rolepolicy.io/approval-effect/v0' });
    const [result] = await finalResults('plan-encoding');
    expect(result).toMatchObject({ phase: 'Superseded', reason: 'DigestEncodingMismatch' });
    expect(await roleExists(db.url, name)).toBe(false);
  });

  it('a plan approved for another server (physical identity changed) is superseded, nothing executed', async () => {
    const db = await database('exec_identity');
    const name = role('identity');
    const { request } = await approvedRequest({
      secrets,
      url: db.url,
      planName: 'plan-identity',
      content: policyFor(name),
    });
    // The executor reads the identity of the live server; a recorded one from another server means moved.
    await publishRequest(nc, names, {
      ...request,
      approvedIdentity: { ...request.approvedIdentity, physical: '1' },
    });
    const [result] = await finalResults('plan-identity');
    expect(result).toMatchObject({ phase: 'Superseded', reason: 'TargetChanged', executedDigest: null });
    expect(await roleExists(db.url, name)).toBe(false);
  });

  it('fails closed when the plan recorded a physical identity and it cannot be read now', async () => {
    const db = await database('exec_unreadable');
    const name = role('unreadable');
    const executor = role('limited');
    await query(db.url, `CREATE ROLE "${executor}" LOGIN CREATEROLE`);
    await query(db.url, `GRANT CREATE ON DATABASE "${db.database}" TO "${executor}"`);
    // pg_proc is per database: revoking here hides system_identifier from non-superusers of this database only.
    await query(db.url, 'REVOKE EXECUTE ON FUNCTION pg_catalog.pg_control_system() FROM PUBLIC');
    const { request } = await approvedRequest({
      secrets,
      url: db.url,
      planName: 'plan-unreadable',
      content: policyFor(name),
    });
    expect(request.approvedIdentity.physical).not.toBeNull();
    const limited = new URL(db.url);
    limited.username = executor;
    secrets.connections.set(`${request.policy.namespace}/${request.target}`, { url: limited.toString() });
    await publishRequest(nc, names, request);
    const [result] = await finalResults('plan-unreadable');
    expect(result).toMatchObject({
      phase: 'Failed',
      reason: 'TargetIdentityUnavailable',
      executedDigest: null,
    });
    expect(await roleExists(db.url, name)).toBe(false);
  });

  it('fails closed when requirePhysicalIdentity is set and the plan has no physical identity', async () => {
    const db = await database('exec_require');
    const name = role('require');
    const { request } = await approvedRequest({
      secrets,
      url: db.url,
      planName: 'plan-require',
      content: policyFor(name),
    });
    await publishRequest(nc, names, {
      ...request,
      requirePhysicalIdentity: true,
      approvedIdentity: { ...request.approvedIdentity, physical: null },
    });
    const [result] = await finalResults('plan-require');
    expect(result).toMatchObject({
      phase: 'Failed',
      reason: 'PhysicalIdentityRequired',
      executedDigest: null,
    });
    expect(await roleExists(db.url, name)).toBe(false);
  });

  it('a secretRef password is set as a SCRAM verifier; neither it nor the URL reaches results or logs', async () => {
    const db = await database('exec_password');
    const name = role('password');
    const cleartext = `Pw-${run}-not-for-logs`;
    const version = 'app-login:password:41';
    secrets.passwords.set(`team-a/${name}/${version}`, cleartext);
    const content: PolicyContent = {
      roles: [{ name, login: true, password: { secretRef: { name: 'app-login' }, secretKey: 'password' } }],
    };
    const written: string[] = [];
    // Capture everything the in-process replicas print (they run at LOG_LEVEL=log) while the password is in play.
    const originals = [process.stdout, process.stderr].map((stream) => {
      const write = stream.write.bind(stream);
      stream.write = ((chunk: string | Uint8Array, ...rest: never[]) => {
        written.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
        return write(chunk, ...rest);
      }) as typeof stream.write;
      return { stream, write };
    });
    try {
      const { request } = await approvedRequest({
        secrets,
        url: db.url,
        planName: 'plan-password',
        content,
        passwordSources: { [name]: version },
      });
      await publishRequest(nc, names, request);
      const [result] = await finalResults('plan-password');
      expect(result).toMatchObject({
        phase: 'Applied',
        reason: 'Executed',
        appliedPasswordSourceVersions: { [name]: version },
      });
    } finally {
      for (const { stream, write } of originals) stream.write = write;
    }
    const [row] = await query<{ rolpassword: string }>(
      db.url,
      'SELECT rolpassword FROM pg_authid WHERE rolname = $1',
      [name],
    );
    expect(written.join('')).toContain('plan-password: Applied');
    expect(row?.rolpassword).toMatch(/^SCRAM-SHA-256\$4096:/);
    const published = JSON.stringify(resultsOf('plan-password')) + written.join('');
    for (const secret of [cleartext, row?.rolpassword ?? 'missing', db.url])
      expect(published).not.toContain(secret);
  });

  it('an unresolvable connection Secret fails closed at once (SecretUnavailable), nothing executed', async () => {
    const db = await database('exec_nosecret');
    const name = role('nosecret');
    const { request } = await approvedRequest({
      secrets,
      url: db.url,
      planName: 'plan-nosecret',
      content: policyFor(name),
    });
    await publishRequest(nc, names, { ...request, target: 'team-a/missing-secret/DATABASE_URL' });
    const [result] = await finalResults('plan-nosecret');
    expect(result).toMatchObject({ phase: 'Failed', reason: 'SecretUnavailable' });
    expect(await roleExists(db.url, name)).toBe(false);
  });

  it('a permanent database error (missing database) is reported Failed without retrying', async () => {
    const db = await database('exec_nodb');
    const name = role('nodb');
    const { request } = await approvedRequest({
      secrets,
      url: db.url,
      planName: 'plan-nodb',
      content: policyFor(name),
    });
    const gone = new URL(db.url);
    gone.pathname = `/${db.database}_absent`;
    secrets.connections.set(`team-a/${request.target}`, { url: gone.toString() });
    await publishRequest(nc, names, request);
    const [result] = await finalResults('plan-nodb');
    expect(result).toMatchObject({ phase: 'Failed', reason: 'DatabaseError', errorClass: 'permanent' });
    expect(result?.message).toContain('3D000');
  });

  it('an unreachable database is retried by redelivery, then reported Failed on the last delivery', async () => {
    const db = await database('exec_down');
    const name = role('down');
    const { request } = await approvedRequest({
      secrets,
      url: db.url,
      planName: 'plan-down',
      content: policyFor(name),
    });
    secrets.connections.set(`team-a/${request.target}`, {
      url: 'postgres://postgres:pw-down@127.0.0.1:1/nowhere',
    });
    await publishRequest(nc, names, request);
    const [result] = await finalResults('plan-down');
    expect(result).toMatchObject({ phase: 'Failed', reason: 'DatabaseUnavailable', errorClass: 'transient' });
    expect(resultsOf('plan-down')).toHaveLength(1);
    expect(JSON.stringify(result)).not.toContain('pw-down');
  });

  it('a v1 request (no planning inputs) is refused as incomplete, never executed', async () => {
    await publishRaw(nc, names, {
      v: 1,
      plan: {
        apiVersion: 'rolepolicy.io/v1alpha1',
        kind: 'PostgresPolicyPlan',
        namespace: 'team-a',
        name: 'plan-v1',
      },
      changeDigest: 'sha256:abc',
      idempotencyKey: 'uid/plan-v1/sha256:abc',
    });
    const [result] = await finalResults('plan-v1');
    expect(result).toMatchObject({ phase: 'Failed', reason: 'RequestIncomplete', statementCount: 0 });
  });

  it('a failed statement leaves the database unchanged and the result carries the redacted statement and SQLSTATE', async () => {
    const db = await database('exec_fail');
    const name = role('fail');
    const content: PolicyContent = {
      roles: [{ name, login: false, config: { work_mem: 'not-a-size' } }],
      schemas: [{ name: 'app' }],
      grants: [{ role: name, privileges: ['USAGE'], object: { type: 'schema', name: 'app' } }],
    };
    const { request } = await approvedRequest({ secrets, url: db.url, planName: 'plan-fail', content });
    await publishRequest(nc, names, request);
    const [result] = await finalResults('plan-fail');
    expect(result).toMatchObject({
      phase: 'Failed',
      reason: 'ExecutionFailed',
      executedDigest: null,
      errorClass: 'permanent',
    });
    expect(result?.failedAt).toBeDefined();
    expect(result?.lastError?.sqlState).toBe('22023');
    expect(result?.lastError?.statement).toContain('work_mem');
    expect(result?.lastError?.statementIndex).not.toBeNull();
    expect(await roleExists(db.url, name)).toBe(false);
    expect(await query(db.url, "SELECT 1 FROM pg_namespace WHERE nspname = 'app'")).toHaveLength(0);
    expect(await query(db.url, 'SELECT 1 FROM public.rp_lock_log')).toHaveLength(0);
  });

  it(`two replicas, ${DATABASES} databases, each request sent twice: every plan applied exactly once, never two holders at once`, async () => {
    const targets = await Promise.all(
      Array.from({ length: DATABASES }, async (_, i) => {
        const db = await database(`exec_many_${i}`);
        const name = role(`many_${i}`);
        const { request } = await approvedRequest({
          secrets,
          url: db.url,
          planName: `plan-many-${i}`,
          content: policyFor(name),
        });
        return { db, name, request };
      }),
    );
    // Both copies back to back, so the two replicas usually take one each and contend for the same lock.
    for (const { request } of targets) {
      await publishRequest(nc, names, request);
      await publishRequest(nc, names, request);
    }
    for (const { db, name, request } of targets) {
      const final = await finalResults(request.plan.name, 2);
      expect(final.map((r) => r.phase)).toEqual(['Applied', 'Applied']);
      expect(final.map((r) => r.reason).sort()).toEqual(['AlreadyConverged', 'Executed']);
      expect(await schemaUsage(db.url, name)).toBe(true);
      const log = await query<{ replica: string; event: string }>(
        db.url,
        'SELECT replica, event FROM public.rp_lock_log ORDER BY id',
      );
      // enter/exit pairs of one replica, never interleaved: one holder at a time, one execution in all.
      expect(log.map((r) => r.event)).toEqual(['enter', 'exit']);
      expect(log[0]?.replica).toBe(log[1]?.replica);
    }
  }, 120_000);
});
