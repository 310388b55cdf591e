// Target databases of end-to-end tests: a sandbox PostgreSQL database per target plus the connection
// Secret a policy names, raw SQL on it, and cleanup of the cluster-global roles the policies created.
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import pg from 'pg';
import {
  createPostgresSandbox,
  createPostgresSandboxOn,
  postgresAdminUrl,
  type PostgresSandbox,
} from '@rolepolicy/testing';

/** A target database and the Secret holding its URL under `DATABASE_URL`. */
export type TargetDatabase = {
  readonly database: string;
  /** Connection URL (the local trust-auth superuser): test-only, never print it from product code. */
  readonly url: string;
  /** Name of the Secret holding the URL, in the stack's namespace. */
  readonly secretName: string;
  /** The `connection` block of a policy pointing at this database. */
  readonly connection: { readonly secretRef: { readonly name: string } };
  /** Runs SQL on the target as the superuser and returns the rows. */
  sql<R extends Record<string, unknown> = Record<string, unknown>>(
    text: string,
    params?: readonly unknown[],
  ): Promise<R[]>;
};

/** Creates and tracks target databases; {@link dispose} drops them and the roles named with `rolePrefix`. */
export class TargetDatabases {
  private readonly sandboxes: PostgresSandbox[] = [];
  private readonly pools: pg.Pool[] = [];
  private readonly secrets: { readonly name: string; readonly url: string }[] = [];
  private core: CoreV1Api;

  constructor(
    kc: KubeConfig,
    private readonly namespace: string,
    /** Every role a test declares starts with this, so cleanup never touches another file's roles. */
    readonly rolePrefix: string,
  ) {
    this.core = kc.makeApiClient(CoreV1Api);
  }

  /**
   * A fresh database plus its connection Secret `<secretName>` (default `<label>-db`), on the test server or
   * on the server whose admin URL is `server` (e.g. one of several `startEmbeddedPostgresServer` servers).
   */
  async create(label: string, secretName = `${label}-db`, server?: string): Promise<TargetDatabase> {
    const sandbox =
      server === undefined
        ? await createPostgresSandbox(`e2e_${label}`)
        : await createPostgresSandboxOn(`e2e_${label}`, server);
    this.sandboxes.push(sandbox);
    const pool = new pg.Pool({ connectionString: sandbox.url, max: 2 });
    // An idle client cut off by the final DROP DATABASE ... WITH (FORCE) must not crash the test file.
    pool.on('error', () => undefined);
    this.pools.push(pool);
    this.secrets.push({ name: secretName, url: sandbox.url });
    await this.createSecret(secretName, sandbox.url);
    return {
      database: sandbox.database,
      url: sandbox.url,
      secretName,
      connection: { secretRef: { name: secretName } },
      sql: async <R extends Record<string, unknown>>(text: string, params?: readonly unknown[]) =>
        (await pool.query<R>(text, params ? [...params] : undefined)).rows,
    };
  }

  /** Points at another API (a replaced emulator) and creates every connection Secret there again. */
  async moveTo(kc: KubeConfig): Promise<void> {
    this.core = kc.makeApiClient(CoreV1Api);
    for (const { name, url } of this.secrets) await this.createSecret(name, url);
  }

  private async createSecret(secretName: string, url: string): Promise<void> {
    await this.core.createNamespacedSecret({
      namespace: this.namespace,
      body: {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: secretName, namespace: this.namespace },
        type: 'Opaque',
        stringData: { DATABASE_URL: url },
      },
    });
  }

  /** Closes pools, drops every database, then the roles starting with the prefix on every server used. */
  async dispose(): Promise<void> {
    await Promise.allSettled(this.pools.map((p) => p.end()));
    await Promise.allSettled(this.sandboxes.map((s) => s.drop()));
    const servers = new Set([await postgresAdminUrl(), ...this.sandboxes.map((s) => s.adminUrl)]);
    await Promise.allSettled([...servers].map((server) => this.dropRoles(server)));
  }

  private async dropRoles(server: string): Promise<void> {
    const admin = new pg.Client({ connectionString: server });
    await admin.connect();
    try {
      const { rows } = await admin.query<{ rolname: string }>(
        'SELECT rolname FROM pg_roles WHERE starts_with(rolname, $1)',
        [this.rolePrefix],
      );
      for (const { rolname } of rows) {
        await admin.query(`DROP ROLE IF EXISTS "${rolname.replace(/"/g, '""')}"`).catch(() => undefined);
      }
    } finally {
      await admin.end();
    }
  }
}
