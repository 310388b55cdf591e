// The inspector as deployed (startService, configuration from the environment) reading a policy's target
// whose connection uses cloud workload identity: CLOUD_IDENTITY_PROVIDER=gcp, the GKE metadata server played
// by a local issuer whose every token becomes the role's password on a scram-sha-256 server with TLS (its CA in
// DATABASE_TLS_CA_FILE). No token may reach a reply or anything the service prints; the operator's host list
// (CLOUD_IDENTITY_ALLOWED_HOSTS, per namespace) holds against the request's namespace.
import type { INestApplication } from '@nestjs/common';
import { Objm } from '@nats-io/obj';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { ensureSnapshotBucket, managedScopePayload, type InspectQuery } from '@rolepolicy/contracts';
import type { ManagedScope } from '@rolepolicy/policy';
import { startService } from '@rolepolicy/runtime';
import {
  inspectSealEnv,
  createNatsSandbox,
  freePort,
  startPrivatePostgres,
  startTokenIssuer,
  type NatsSandbox,
  type PrivatePostgres,
  type TokenIssuerSandbox,
} from '@rolepolicy/testing';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { requestSnapshot } from '@rolepolicy/contracts';
import { inspectorService } from './service.js';

const ADMIN_PASSWORD = 'Admin-Pa55-cloud-identity';
const ROLE = 'orders_iam';

let server: PrivatePostgres;
let issuer: TokenIssuerSandbox;
let admin: pg.Client;
let nats: NatsSandbox;
let client: NatsConnection;
let app: INestApplication;
let subject: string;
let caDir: string;
const savedMetadataHost = process.env['GCE_METADATA_HOST'];

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

const scope: ManagedScope = {
  roles: [ROLE],
  membership_grantors: [],
  schemas: ['app'],
  owned_schemas: [],
  wildcards: [],
  public_objects: [],
  default_privilege_scopes: [],
  include_database_privileges: false,
  database_targets: [],
  function_signatures: [],
};

function request(username: string, namespace = 'team-a'): InspectQuery {
  return {
    v: 1,
    requestId: `req-${Math.random().toString(36).slice(2)}`,
    source: {
      apiVersion: 'rolepolicy.io/v1alpha1',
      kind: 'PostgresPolicy',
      namespace,
      name: 'orders',
    },
    generation: 1,
    connection: {
      params: {
        host: 'localhost',
        port: server.port,
        dbname: 'postgres',
        username,
        sslMode: 'verify-full',
        auth: { type: 'cloud_workload_identity', impersonateServiceAccount: null, scope: null },
      },
      setRole: null,
    },
    scope: managedScopePayload(scope),
  };
}

beforeAll(async () => {
  server = await startPrivatePostgres(ADMIN_PASSWORD, { tls: true });
  caDir = await mkdtemp(path.join(tmpdir(), 'rp-ca-'));
  await writeFile(path.join(caDir, 'ca.pem'), server.caPem!);
  admin = new pg.Client({
    host: '127.0.0.1',
    port: server.port,
    user: 'postgres',
    password: ADMIN_PASSWORD,
    database: 'postgres',
  });
  await admin.connect();
  await admin.query(
    `CREATE ROLE ${ROLE} LOGIN; CREATE SCHEMA app; CREATE TABLE app.orders (id int);
     GRANT USAGE ON SCHEMA app TO ${ROLE}; GRANT SELECT ON app.orders TO ${ROLE}`,
  );
  issuer = await startTokenIssuer({
    lifetimeSeconds: 3600,
    onToken: async (token) => {
      await admin.query(`ALTER ROLE ${ROLE} PASSWORD '${token}'`);
    },
  });
  // The SDK's own variable: where the metadata server is (the service reads it from its environment).
  process.env['GCE_METADATA_HOST'] = issuer.host;
  nats = await createNatsSandbox();
  subject = nats.subject('inspect.request');
  capture(process.stdout, writes.out);
  capture(process.stderr, writes.err);
  client = await connect({ servers: nats.url });
  // Standing in for the k8s-gateway, which creates the bucket the inspector binds to (ADR 0022).
  await ensureSnapshotBucket(client, `sbx-${nats.id}-snapshots`);
  app = await startService(inspectorService, {
    env: {
      NATS_URL: nats.url,
      HTTP_HOST: '127.0.0.1',
      HTTP_PORT: String(await freePort()),
      LOG_LEVEL: 'verbose',
      INSPECT_REQUEST_SUBJECT: subject,
      ...inspectSealEnv(),
      INSPECT_OBJECT_BUCKET: `sbx-${nats.id}-snapshots`,
      CLOUD_IDENTITY_PROVIDER: 'gcp',
      CLOUD_IDENTITY_ALLOWED_HOSTS: 'team-a/localhost',
      DATABASE_TLS_CA_FILE: path.join(caDir, 'ca.pem'),
    },
    topology: { streams: [], consumers: [] },
  });
}, 120_000);

afterAll(async () => {
  await app?.close();
  process.stdout.write = writes.out;
  process.stderr.write = writes.err;
  if (savedMetadataHost === undefined) delete process.env['GCE_METADATA_HOST'];
  else process.env['GCE_METADATA_HOST'] = savedMetadataHost;
  if (client && nats) {
    await new Objm(client)
      .open(`sbx-${nats.id}-snapshots`)
      .then((store) => store.destroy())
      .catch(() => undefined);
  }
  await client?.close();
  await nats?.cleanup();
  await admin?.end();
  await issuer?.close();
  await server?.dispose();
  if (caDir !== undefined) await rm(caDir, { recursive: true, force: true });
}, 60_000);

describe('inspector with CLOUD_IDENTITY_PROVIDER=gcp', () => {
  it('reads the target with the workload token, and reports an unreachable provider without a token', async () => {
    const result = await requestSnapshot(client, request(ROLE), {
      subject,
      timeoutMs: 60_000,
      sealTo: inspectSealEnv().INSPECT_SEAL_PUBLIC_KEY,
    });
    expect(result).toMatchObject({ ok: true, via: 'inline' });
    if (!result.ok) return;
    expect(result.snapshot.schemas.map((s) => s.name)).toEqual(['app']);
    expect(issuer.calls).toContainEqual({
      kind: 'gcp-metadata-token',
      scopes: 'https://www.googleapis.com/auth/sqlservice.login',
    });

    issuer.setDown(true);
    const failed = await requestSnapshot(client, request('someone_else'), {
      subject,
      timeoutMs: 60_000,
      sealTo: inspectSealEnv().INSPECT_SEAL_PUBLIC_KEY,
    });
    issuer.setDown(false);
    expect(failed).toMatchObject({
      ok: false,
      error: {
        class: 'transient',
        code: '08001',
        message: expect.stringContaining(
          `cloud workload identity (gcp) for user someone_else at localhost:${server.port}: no token:`,
        ),
      },
    });

    // A policy of another namespace naming the same host: the operator listed it for team-a only.
    const calls = issuer.calls.length;
    const foreign = await requestSnapshot(client, request(ROLE, 'team-b'), {
      subject,
      timeoutMs: 60_000,
      sealTo: inspectSealEnv().INSPECT_SEAL_PUBLIC_KEY,
    });
    expect(foreign).toMatchObject({
      ok: false,
      error: {
        class: 'permanent',
        code: '28000',
        message:
          'connection.params.host is not allowed for cloud workload identity for namespace team-b: ' +
          'the operator lists the hosts a token may be sent to in CLOUD_IDENTITY_ALLOWED_HOSTS',
      },
    });
    expect(issuer.calls.length).toBe(calls);

    expect(issuer.issued.length).toBeGreaterThan(0);
    const seen = printed.join('') + JSON.stringify([result, failed]);
    for (const token of issuer.issued) expect(seen).not.toContain(token);
  }, 120_000);
});
