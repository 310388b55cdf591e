// The inspector serves `rp.inspect.request` over real NATS against real PostgreSQL: the reply equals
// inspect() called directly, large snapshots travel through the object store, and failures are classified and redacted.
import type { INestApplication } from '@nestjs/common';
import { Objm } from '@nats-io/obj';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { inspect, openConnection, readReviewFacts, type CatalogConnection } from '@rolepolicy/catalog';
import {
  ensureSnapshotBucket,
  exportedKeyPair,
  managedScopePayload,
  seal,
  type InspectQuery,
} from '@rolepolicy/contracts';
import type { ManagedScope } from '@rolepolicy/policy';
import { startService } from '@rolepolicy/runtime';
import {
  inspectSealEnv,
  createNatsSandbox,
  createPostgresSandbox,
  freePort,
  sandboxId,
  startPrivatePostgres,
  type NatsSandbox,
  type PostgresSandbox,
  type PrivatePostgres,
} from '@rolepolicy/testing';
import pg from 'pg';
import { requestSnapshot, requestSnapshotUnlessUnchanged, type SnapshotResult } from '@rolepolicy/contracts';
import { inspectorService } from './service.js';

const INLINE_MAX_BYTES = 16_384;
const PASSWORD = 'Inspector-Pa55-Secret';
const id = sandboxId();
const prefix = `rp_${id}_`;
const role = (name: string): string => `${prefix}${name}`;

let db: PostgresSandbox;
let nats: NatsSandbox;
let client: NatsConnection;
let app: INestApplication;
let direct: CatalogConnection;
let securePg: PrivatePostgres;
let subject: string;
let bucket: string;
let readyUrl: string;
/** URL of the sandbox with a password in it: the local server trusts it, but it must never be logged. */
let urlWithPassword: string;

// Everything the service prints (at the most verbose level) is kept, to prove no secret reaches a log.
const printed: string[] = [];
const writes = { out: process.stdout.write, err: process.stderr.write };
function capture(stream: NodeJS.WriteStream, original: typeof process.stdout.write): void {
  stream.write = ((chunk: string | Uint8Array, ...rest: unknown[]): boolean => {
    printed.push(typeof chunk === 'string' ? chunk : new TextDecoder().decode(chunk));
    return stream === process.stderr
      ? (original as (c: string | Uint8Array, ...r: unknown[]) => boolean).call(stream, chunk, ...rest)
      : true;
  }) as typeof process.stdout.write;
}

function scopeOf(partial: Partial<ManagedScope>): ManagedScope {
  return {
    roles: [],
    membership_grantors: [],
    schemas: [],
    owned_schemas: [],
    wildcards: [],
    public_objects: [],
    default_privilege_scopes: [],
    include_database_privileges: false,
    database_targets: [],
    function_signatures: [],
    ...partial,
  };
}

function request(connection: InspectQuery['connection'], scope: ManagedScope): InspectQuery {
  return {
    v: 1,
    requestId: `req-${Math.random().toString(36).slice(2)}`,
    source: {
      apiVersion: 'rolepolicy.io/v1alpha1',
      kind: 'PostgresPolicy',
      namespace: 'team-a',
      name: 'orders',
    },
    generation: 1,
    connection,
    scope: managedScopePayload(scope),
  };
}

const sealKey = (): string => inspectSealEnv().INSPECT_SEAL_PUBLIC_KEY;

const ask = (req: InspectQuery): Promise<SnapshotResult> =>
  requestSnapshot(client, req, { subject, timeoutMs: 30_000, sealTo: sealKey() });

async function sql(url: string, text: string): Promise<void> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query(text);
  } finally {
    await c.end();
  }
}

const smallScope = (): ManagedScope =>
  scopeOf({
    roles: [role('reader'), role('writer')],
    schemas: ['app'],
    wildcards: [{ grantee: role('reader'), object_type: 'table', schema: 'app', privileges: ['SELECT'] }],
  });

const largeScope = (): ManagedScope =>
  scopeOf({
    roles: [role('reader'), role('writer')],
    schemas: ['app', 'bulk'],
    wildcards: [
      { grantee: role('reader'), object_type: 'table', schema: 'app', privileges: ['SELECT'] },
      { grantee: role('reader'), object_type: 'table', schema: 'bulk', privileges: ['SELECT'] },
    ],
  });

beforeAll(async () => {
  db = await createPostgresSandbox('inspector');
  nats = await createNatsSandbox();
  subject = nats.subject('inspect.request');
  bucket = `sbx-${id}-snapshots`;
  await sql(
    db.url,
    `CREATE ROLE "${role('reader')}"; CREATE ROLE "${role('writer')}";
     CREATE SCHEMA app; CREATE TABLE app.orders (id int); CREATE VIEW app.v AS SELECT 1 AS one;
     GRANT USAGE ON SCHEMA app TO "${role('reader')}"; GRANT SELECT ON app.orders TO "${role('reader')}";
     GRANT INSERT, UPDATE ON app.orders TO "${role('writer')}";
     CREATE SCHEMA bulk;
     DO $$ BEGIN FOR i IN 1..400 LOOP
       EXECUTE format('CREATE TABLE bulk.%I (id int)', 'table_with_a_longish_name_' || i);
       EXECUTE format('GRANT SELECT ON bulk.%I TO %I', 'table_with_a_longish_name_' || i, '${role('reader')}');
     END LOOP; END $$;`,
  );
  direct = openConnection({ url: db.url });
  const withPassword = new URL(db.url);
  withPassword.password = PASSWORD;
  urlWithPassword = withPassword.toString();
  capture(process.stdout, writes.out);
  capture(process.stderr, writes.err);
  // TLS on: the default sslMode sends a password only over TLS.
  securePg = await startPrivatePostgres(PASSWORD, { tls: true });
  const port = await freePort();
  readyUrl = `http://127.0.0.1:${port}/readyz`;
  client = await connect({ servers: nats.url });
  // Standing in for the k8s-gateway, which creates the bucket the inspector binds to (ADR 0022).
  await ensureSnapshotBucket(client, bucket);
  app = await startService(inspectorService, {
    env: {
      NATS_URL: nats.url,
      HTTP_HOST: '127.0.0.1',
      HTTP_PORT: String(port),
      LOG_LEVEL: 'verbose',
      INSPECT_REQUEST_SUBJECT: subject,
      ...inspectSealEnv(),
      INSPECT_OBJECT_BUCKET: bucket,
      INSPECT_INLINE_MAX_BYTES: String(INLINE_MAX_BYTES),
    },
    topology: { streams: [], consumers: [] },
  });
}, 120_000);

afterAll(async () => {
  await app?.close();
  process.stdout.write = writes.out;
  process.stderr.write = writes.err;
  if (client) {
    await new Objm(client)
      .open(bucket)
      .then((store) => store.destroy())
      .catch(() => undefined);
    await client.close();
  }
  await direct?.close();
  await securePg?.dispose();
  await nats?.cleanup();
  if (db) {
    await sql(db.url, `DROP OWNED BY "${role('reader')}", "${role('writer')}" CASCADE`).catch(
      () => undefined,
    );
    await db.drop();
    await sql(
      'postgres://postgres@127.0.0.1:5432/postgres',
      `DROP ROLE IF EXISTS "${role('reader')}", "${role('writer')}"`,
    );
  }
}, 60_000);

describe('inspector: snapshot requests over NATS', () => {
  it('a request answers with the snapshot inspect() reads directly', async () => {
    const result = await ask(request({ url: urlWithPassword }, smallScope()));
    const expected = await inspect(direct.db, smallScope(), direct.target);
    expect(result).toEqual({ ok: true, snapshot: expected, via: 'inline' });
    expect(JSON.stringify(expected).length).toBeLessThanOrEqual(INLINE_MAX_BYTES);
  }, 60_000);

  it('a snapshot larger than the inline limit travels through the object store', async () => {
    const result = await ask(request({ url: db.url }, largeScope()));
    const expected = await inspect(direct.db, largeScope(), direct.target);
    expect(JSON.stringify(expected).length).toBeGreaterThan(INLINE_MAX_BYTES);
    expect(result).toEqual({ ok: true, snapshot: expected, via: 'object' });
  }, 60_000);

  it('a request with `review` also answers the review facts of the same read, inline and by object', async () => {
    const review = { dropRoles: [role('writer')], predefinedRoles: ['pg_read_all_data', 'pg_no_such_role'] };
    const expected = await readReviewFacts(
      direct.db,
      [
        { kind: 'drop_role', name: role('writer') },
        { kind: 'add_member', role: 'pg_read_all_data', member: role('reader'), admin: false, inherit: true },
        { kind: 'add_member', role: 'pg_no_such_role', member: role('reader'), admin: false, inherit: true },
      ],
      (await inspect(direct.db, smallScope(), direct.target)).server_version_num,
    );
    // The writer still holds privileges on app.orders: the drop facts say so.
    expect(expected.drop_roles).toEqual([expect.objectContaining({ role: role('writer'), acl_current: 1 })]);
    expect(expected.predefined_roles).toEqual(['pg_read_all_data']);
    // The executor (a superuser here) sees every membership of the server, and roles are cluster-wide: test
    // files running beside this one add and drop theirs between two reads. Compare this file's and the
    // built-in roles' edges only.
    const ours = (facts: unknown) => {
      const f = facts as { executor_memberships: { role: string; member: string }[] };
      const stable = (r: string): boolean => r.startsWith(prefix) || r.startsWith('pg_');
      return {
        ...f,
        executor_memberships: f.executor_memberships.filter((m) => stable(m.role) && stable(m.member)),
      };
    };
    const small = await ask({ ...request({ url: db.url }, smallScope()), review });
    expect({ ...small, reviewFacts: ours((small as { reviewFacts?: unknown }).reviewFacts) }).toEqual({
      ok: true,
      snapshot: await inspect(direct.db, smallScope(), direct.target),
      via: 'inline',
      reviewFacts: ours(expected),
    });
    const large = await ask({ ...request({ url: db.url }, largeScope()), review });
    expect({ ...large, reviewFacts: ours((large as { reviewFacts?: unknown }).reviewFacts) }).toMatchObject({
      ok: true,
      via: 'object',
      reviewFacts: ours(expected),
    });
  }, 60_000);

  it('with a fingerprint asked for, the snapshot carries it, and the same fingerprint answers unchanged until drift', async () => {
    const options = { subject, timeoutMs: 30_000, sealTo: sealKey() };
    const scope = smallScope();
    const first = await requestSnapshotUnlessUnchanged(
      client,
      { ...request({ url: db.url }, scope), withFingerprint: true },
      options,
    );
    if (!first.ok || 'unchanged' in first) throw new Error('expected a snapshot');
    expect(first.snapshot).toEqual(await inspect(direct.db, scope, direct.target));
    expect(first.fingerprint).toMatch(/^sha256:[0-9a-f]{64}$/);
    const again = await requestSnapshotUnlessUnchanged(
      client,
      { ...request({ url: db.url }, scope), unlessFingerprint: first.fingerprint! },
      options,
    );
    expect(again).toEqual({ ok: true, unchanged: true, fingerprint: first.fingerprint });
    await sql(db.url, `CREATE TABLE app.late (id int)`);
    const drifted = await requestSnapshotUnlessUnchanged(
      client,
      { ...request({ url: db.url }, scope), unlessFingerprint: first.fingerprint! },
      options,
    );
    if (!drifted.ok || 'unchanged' in drifted) throw new Error('expected a snapshot after drift');
    expect(drifted.fingerprint).not.toBe(first.fingerprint);
    expect(drifted.snapshot).toEqual(await inspect(direct.db, scope, direct.target));
    await sql(db.url, `DROP TABLE app.late`);
  }, 60_000);

  it('a wrong password is a permanent error whose message carries no password', async () => {
    const wrong = `Wrong-${PASSWORD}`;
    const viaParams = await ask(
      request(
        {
          params: {
            host: '127.0.0.1',
            port: securePg.port,
            dbname: 'postgres',
            username: 'postgres',
            password: wrong,
          },
        },
        smallScope(),
      ),
    );
    const viaUrl = await ask(
      request({ url: `postgres://postgres:${wrong}@127.0.0.1:${securePg.port}/postgres` }, smallScope()),
    );
    for (const result of [viaParams, viaUrl]) {
      expect(result.ok).toBe(false);
      if (result.ok) continue;
      expect(result.error.class).toBe('permanent');
      expect(result.error.code).toBe('28P01');
      expect(result.error.message).toContain('password authentication failed');
      expect(JSON.stringify(result)).not.toContain(wrong);
    }
  }, 60_000);

  it('the right password reads the private server (credentials are used, not only refused)', async () => {
    const result = await ask(
      request(
        {
          params: {
            host: '127.0.0.1',
            port: securePg.port,
            dbname: 'postgres',
            username: 'postgres',
            password: PASSWORD,
          },
        },
        scopeOf({}),
      ),
    );
    expect(result.ok && result.snapshot.current_database).toBe('postgres');
  }, 60_000);

  it('a refused port is a transient error, and readiness does not depend on targets', async () => {
    const closedPort = await freePort();
    const result = await ask(
      request(
        {
          params: {
            host: '127.0.0.1',
            port: closedPort,
            dbname: 'postgres',
            username: 'postgres',
            password: PASSWORD,
          },
        },
        smallScope(),
      ),
    );
    expect(result).toEqual({
      ok: false,
      error: { class: 'transient', code: 'ECONNREFUSED', message: expect.any(String) },
    });
    expect(JSON.stringify(result)).not.toContain(PASSWORD);
    expect((await fetch(readyUrl)).status).toBe(200);
  }, 60_000);

  /** Sends `payload` as it is (no client-side sealing or validation) and returns the error reply. */
  async function refusal(payload: unknown): Promise<{ class: string; code: string; message: string }> {
    const msg = await client.request(subject, new TextEncoder().encode(JSON.stringify(payload)), {
      timeout: 30_000,
    });
    const reply = JSON.parse(new TextDecoder().decode(msg.data)) as {
      status: string;
      error: { class: string; code: string; message: string };
    };
    expect(reply.status).toBe('error');
    return reply.error;
  }

  it('an invalid request is refused with a permanent error naming the path, never the values', async () => {
    // The connection is checked once opened: its shape is inside the sealed box (ADR 0024).
    const { connection: _clear, ...rest } = request({ url: db.url }, smallScope());
    const box = new TextEncoder().encode(
      JSON.stringify({ v: 1, connection: { url: db.url, setRole: 'no good' } }),
    );
    const error = await refusal({ ...rest, sealedConnection: seal(box, sealKey(), 'inspect-connection') });
    expect(error.class).toBe('permanent');
    expect(error.message).toContain('/connection');
    expect(error.message).not.toContain('no good');
  }, 60_000);

  it('a connection in clear, or sealed to another key, is refused and never used', async () => {
    const clear = await refusal(request({ url: urlWithPassword }, smallScope()));
    expect(clear.class).toBe('permanent');
    expect(clear.message).toContain('sealedConnection');
    expect(clear.message).not.toContain(PASSWORD);
    const { connection: _clear, ...rest } = request({ url: urlWithPassword }, smallScope());
    const box = new TextEncoder().encode(JSON.stringify({ v: 1, connection: { url: urlWithPassword } }));
    const elsewhere = await refusal({
      ...rest,
      sealedConnection: seal(box, exportedKeyPair().publicKey, 'inspect-connection'),
    });
    expect(elsewhere).toMatchObject({ class: 'permanent', code: 'SealedConnectionRefused' });
    expect(elsewhere.message).toContain('INSPECT_SEAL_PRIVATE_KEY');
  }, 60_000);

  it("a database owner's look-alike = operator first on the search_path does not change what the inspector reads", async () => {
    const hostile = await createPostgresSandbox('inspector_hostile');
    const owner = role('owner');
    const asOwner = new URL(hostile.url);
    asOwner.username = owner;
    try {
      await sql(
        hostile.url,
        `CREATE ROLE "${owner}" LOGIN; ALTER DATABASE "${hostile.database}" OWNER TO "${owner}"`,
      );
      // An operator that says no role name matches: read through it, every managed role looks absent.
      await sql(
        asOwner.toString(),
        `CREATE SCHEMA tricks;
         CREATE FUNCTION tricks.never(name, text) RETURNS boolean LANGUAGE sql IMMUTABLE AS 'SELECT false';
         CREATE OPERATOR tricks.= (LEFTARG = name, RIGHTARG = text, FUNCTION = tricks.never);
         ALTER DATABASE "${hostile.database}" SET search_path = tricks, pg_catalog;`,
      );
      const result = await ask(
        request({ url: hostile.url }, scopeOf({ roles: [role('reader'), role('writer')] })),
      );
      if (!result.ok || !('snapshot' in result))
        throw new Error(`expected a snapshot: ${JSON.stringify(result)}`);
      expect(result.snapshot.existing_roles).toEqual([role('reader'), role('writer')]);
    } finally {
      await hostile.drop();
      await sql('postgres://postgres@127.0.0.1:5432/postgres', `DROP ROLE IF EXISTS "${owner}"`);
    }
  }, 60_000);

  it('/metrics counts requests by outcome', async () => {
    const text = await (await fetch(readyUrl.replace('/readyz', '/metrics'))).text();
    for (const outcome of ['inline', 'object', 'unchanged', 'transient', 'permanent'])
      expect(text).toMatch(new RegExp(`rp_inspect_requests_total\\{[^}]*outcome="${outcome}"[^}]*\\} [1-9]`));
    expect(text).toContain('rp_inspect_target_pools');
  });

  it('nothing the service printed carries a password or a connection URL', () => {
    const text = printed.join('');
    expect(text).toContain('inspect request answered');
    for (const secret of [PASSWORD, urlWithPassword, db.url]) expect(text).not.toContain(secret);
  });
});
