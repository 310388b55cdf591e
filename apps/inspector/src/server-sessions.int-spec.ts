// Per-server limits of the inspector (issue 28, "Several servers"): one replica holds at most
// INSPECT_SERVER_SESSIONS sessions on one PostgreSQL server, warm idle ones included, whatever INSPECT_CONCURRENCY
// and INSPECT_MAX_TARGET_POOLS allow. Many inspections of the databases of a small server (max_connections 5)
// at once all answer, none with "too many clients"; a sampler counts the inspector's sessions every few ms.
import type { INestApplication } from '@nestjs/common';
import { Objm } from '@nats-io/obj';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import pg from 'pg';
import {
  ensureSnapshotBucket,
  managedScopePayload,
  requestSnapshot,
  type InspectQuery,
  type SnapshotResult,
} from '@rolepolicy/contracts';
import { startService } from '@rolepolicy/runtime';
import {
  createNatsSandbox,
  createPostgresSandboxOn,
  freePort,
  inspectSealEnv,
  sandboxId,
  startEmbeddedPostgresServer,
  type EmbeddedPostgres,
  type NatsSandbox,
} from '@rolepolicy/testing';
import { inspectorService } from './service.js';

const DATABASES = 10;
const ROUNDS = 2;
const SERVER_SESSIONS = 2;
/** The bound's two sessions, the sampler's, and two to spare (a backend that is still exiting, the admin's). */
const MAX_CONNECTIONS = 5;
const id = sandboxId();

/** Sessions of the inspector on the server, sampled every few ms until stopped. */
class InspectorSessions {
  readonly samples: number[] = [];
  private running = true;
  private readonly done: Promise<void>;

  constructor(private readonly client: pg.Client) {
    this.done = this.loop();
  }

  private async loop(): Promise<void> {
    while (this.running) {
      const { rows } = await this.client.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_catalog.pg_stat_activity WHERE application_name = 'rolepolicy-inspector'`,
      );
      this.samples.push(rows[0]!.n);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.done;
  }
}

function request(url: string, name: string): InspectQuery {
  return {
    v: 1,
    requestId: `req-${name}-${Math.random().toString(36).slice(2)}`,
    source: { apiVersion: 'rolepolicy.io/v1alpha1', kind: 'PostgresPolicy', namespace: 'team-a', name },
    generation: 1,
    connection: { url },
    scope: managedScopePayload({
      roles: ['postgres'],
      membership_grantors: [],
      schemas: ['public'],
      owned_schemas: [],
      wildcards: [],
      public_objects: [],
      default_privilege_scopes: [],
      include_database_privileges: true,
      database_targets: [],
      function_signatures: [],
    }),
  };
}

describe('inspector: sessions bounded per PostgreSQL server (INSPECT_SERVER_SESSIONS)', () => {
  let small: EmbeddedPostgres;
  let nats: NatsSandbox;
  let client: NatsConnection;
  let app: INestApplication | undefined;
  let subject: string;
  let bucket: string;
  const urls: string[] = [];

  beforeAll(async () => {
    small = await startEmbeddedPostgresServer(15, { maxConnections: MAX_CONNECTIONS });
    for (let i = 0; i < DATABASES; i++)
      urls.push((await createPostgresSandboxOn(`insp_${i}`, small.adminUrl)).url);
    nats = await createNatsSandbox();
    subject = nats.subject('inspect.request');
    bucket = `sbx-${id}-snapshots`;
    client = await connect({ servers: nats.url });
    await ensureSnapshotBucket(client, bucket);
    // INSPECT_CONCURRENCY and INSPECT_MAX_TARGET_POOLS at their defaults (8 and 32): only the server bound holds.
    app = await startService(inspectorService, {
      env: {
        NATS_URL: nats.url,
        HTTP_HOST: '127.0.0.1',
        HTTP_PORT: String(await freePort()),
        LOG_LEVEL: 'warn',
        INSPECT_REQUEST_SUBJECT: subject,
        INSPECT_OBJECT_BUCKET: bucket,
        INSPECT_SERVER_SESSIONS: String(SERVER_SESSIONS),
        ...inspectSealEnv(),
      },
      topology: { streams: [], consumers: [] },
    });
  }, 120_000);

  afterAll(async () => {
    await app?.close().catch(() => undefined);
    if (client) {
      await new Objm(client)
        .open(bucket)
        .then((store) => store.destroy())
        .catch(() => undefined);
      await client.close();
    }
    await nats?.cleanup();
    // The server is this file's own: stopping it removes its databases.
    await small?.stop();
  }, 120_000);

  it('answers every inspection of the server at once, holding at most the bound of its sessions', async () => {
    const admin = new pg.Client({ connectionString: small.adminUrl });
    await admin.connect();
    const sessions = new InspectorSessions(admin);
    let answers: SnapshotResult[];
    try {
      answers = await Promise.all(
        Array.from({ length: ROUNDS }, () => urls)
          .flat()
          .map((url, i) =>
            requestSnapshot(client, request(url, `p${i}`), {
              subject,
              timeoutMs: 60_000,
              sealTo: inspectSealEnv().INSPECT_SEAL_PUBLIC_KEY,
            }),
          ),
      );
    } finally {
      await sessions.stop();
      await admin.end();
    }
    expect(
      answers.map((a) => (a.ok ? 'ok' : `${a.error.class} ${a.error.code}: ${a.error.message}`)),
    ).toEqual(answers.map(() => 'ok'));
    // The bound held and was reached (warm sessions of earlier databases included).
    expect(Math.max(...sessions.samples)).toBe(SERVER_SESSIONS);
  }, 120_000);
});
