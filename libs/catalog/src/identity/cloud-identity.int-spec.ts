// Cloud workload identity against a PostgreSQL that really checks passwords (scram-sha-256) over verified TLS:
// a local token issuer stands in for each provider's endpoint and makes every token it issues the role's
// password (the stand-in for the cloud's IAM check at login). Proves: a pool connects with the provider SDK's
// token, a new connection after the refresh point gets the new token (the old one no longer works), scope and
// impersonation reach the provider, an unreachable provider fails with a message naming it and no token, and
// the operator's bounds hold against a tenant's policy (ADR 0019: hosts, namespaces, impersonation, scopes,
// verify-full only).
import {
  startPrivatePostgres,
  startTcpProxy,
  startTokenIssuer,
  type PrivatePostgres,
  type TcpProxy,
  type TokenIssuerSandbox,
} from '@rolepolicy/testing';
import { sql } from 'kysely';
import pg from 'pg';
import { openConnection, withRedaction, type ConnectionParams } from '../connection.js';
import { DatabaseError } from '../redaction.js';
import { awsRdsIssuer, azureIssuer, gcpIssuer } from './providers.js';
import { CloudIdentityError, type TokenIssuer } from './token-source.js';
import {
  parseAllowList,
  WorkloadIdentity,
  type CloudIdentityProvider,
  type IdentityBounds,
} from './workload-identity.js';

const ADMIN_PASSWORD = 'Admin-Pa55-for-setup';
const ROLE = 'app_iam';
const LIFETIME_SECONDS = 120;

let server: PrivatePostgres;
let issuer: TokenIssuerSandbox;
let admin: pg.Client;
const saved = { ...process.env };
/** The tests' clock: starts at the wall clock (tokens carry real expiry times) and is moved forward by hand. */
const clock = { offset: 0, now: () => Date.now() + clock.offset };

async function setRolePassword(token: string): Promise<void> {
  await admin.query(`ALTER ROLE ${ROLE} PASSWORD '${token.replaceAll("'", "''")}'`);
}

beforeAll(async () => {
  // The certificate names localhost (on the operator's list) and 127.0.0.1 (not on it): same server, two hosts.
  server = await startPrivatePostgres(ADMIN_PASSWORD, {
    tls: true,
    certificateNames: ['DNS:localhost', 'IP:127.0.0.1'],
  });
  admin = new pg.Client({
    host: '127.0.0.1',
    port: server.port,
    user: 'postgres',
    password: ADMIN_PASSWORD,
    database: 'postgres',
  });
  await admin.connect();
  await admin.query(`CREATE ROLE ${ROLE} LOGIN`);
  issuer = await startTokenIssuer({ lifetimeSeconds: LIFETIME_SECONDS, onToken: setRolePassword });
  // Only the local issuer may answer: no ambient cloud credentials from this machine.
  for (const name of Object.keys(process.env)) {
    if (/^(AWS_|AZURE_|GOOGLE_|GCE_|IDENTITY_|MSI_|IMDS_)/.test(name)) delete process.env[name];
  }
  Object.assign(process.env, {
    GCE_METADATA_HOST: issuer.host,
    GOOGLE_APPLICATION_CREDENTIALS: '',
    CLOUDSDK_CONFIG: '/nonexistent',
    IDENTITY_ENDPOINT: `${issuer.url}/msi/token`,
    IDENTITY_HEADER: issuer.azureIdentityHeader,
    AZURE_TOKEN_CREDENTIALS: 'ManagedIdentityCredential',
    AWS_CONTAINER_CREDENTIALS_FULL_URI: `${issuer.url}/aws/credentials`,
    AWS_CONFIG_FILE: '/nonexistent',
    AWS_SHARED_CREDENTIALS_FILE: '/nonexistent',
    AWS_EC2_METADATA_DISABLED: 'true',
  });
}, 120_000);

afterAll(async () => {
  process.env = saved;
  await admin?.end();
  await issuer?.close();
  await server?.dispose();
}, 60_000);

// Each test starts on the wall clock; the SDKs keep their own caches on it.
beforeEach(() => {
  clock.offset = 0;
});

function params(auth: ConnectionParams['auth']): ConnectionParams {
  return {
    host: 'localhost',
    port: server.port,
    dbname: 'postgres',
    username: ROLE,
    sslMode: 'verify-full',
    auth,
  };
}

/** Where a tenant's policy aims the connection (host, port, sslMode) and from which namespace. */
type Aim = Partial<Pick<ConnectionParams, 'host' | 'port' | 'sslMode'>> & { readonly namespace?: string };

/** Connects through a fresh pool (as each execution does) and reports who the server says we are. */
async function whoAmI(
  identity: WorkloadIdentity,
  auth: ConnectionParams['auth'],
  aim: Aim = {},
): Promise<string> {
  const { namespace = 'team-a', ...where } = aim;
  const connection = openConnection(
    { params: { ...params(auth), ...where }, maxConnections: 1 },
    { identity, tls: { ca: server.caPem! }, namespace },
  );
  try {
    return await withRedaction(connection, async () => {
      const result = await sql<{ who: string }>`select current_user as who`.execute(connection.db);
      return result.rows[0]!.who;
    });
  } finally {
    await connection.close();
  }
}

async function passwordWorks(password: string): Promise<boolean> {
  const client = new pg.Client({
    host: '127.0.0.1',
    port: server.port,
    user: ROLE,
    password,
    database: 'postgres',
  });
  try {
    await client.connect();
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** The operator's list: localhost for everyone, one account for team-a, one extra scope. */
const BOUNDS: IdentityBounds = {
  hosts: parseAllowList('localhost'),
  serviceAccounts: parseAllowList('team-a/db-admin@local-project.iam.gserviceaccount.com'),
  scopes: ['https://www.googleapis.com/auth/cloud-platform.read-only', 'https://down.example/.default'],
};

const identityOf = (
  provider: CloudIdentityProvider,
  tokens: TokenIssuer,
  bounds: IdentityBounds = BOUNDS,
): WorkloadIdentity =>
  new WorkloadIdentity(provider, tokens, { marginMs: 5 * 60_000, now: clock.now }, bounds);

const auth = { type: 'cloud_workload_identity' as const };

describe('Google Cloud SQL IAM (google-auth-library, metadata server and IAM Credentials API)', () => {
  it('connects with the pod identity’s token and refreshes it before expiry for new connections', async () => {
    const identity = identityOf('gcp', gcpIssuer());
    const before = issuer.issued.length;

    expect(await whoAmI(identity, auth)).toBe(ROLE);
    const first = issuer.issued.at(-1)!;
    expect(issuer.calls.at(-1)).toEqual({
      kind: 'gcp-metadata-token',
      scopes: 'https://www.googleapis.com/auth/sqlservice.login',
    });

    // Inside the refresh margin nothing is asked again: the cached token serves the next connection.
    expect(await whoAmI(identity, auth)).toBe(ROLE);
    expect(issuer.issued.length).toBe(before + 1);

    // Half-way through a 120 s token (the margin is longer than that), the next connection refreshes.
    clock.offset += (LIFETIME_SECONDS / 2) * 1000;
    expect(await whoAmI(identity, auth)).toBe(ROLE);
    expect(issuer.issued.length).toBe(before + 2);
    expect(await passwordWorks(first)).toBe(false);
    expect(await passwordWorks(issuer.issued.at(-1)!)).toBe(true);
  });

  it('impersonates the configured service account with the configured scope', async () => {
    const identity = identityOf('gcp', gcpIssuer({ iamEndpoint: issuer.url }));
    const scope = 'https://www.googleapis.com/auth/cloud-platform.read-only';
    const serviceAccount = 'db-admin@local-project.iam.gserviceaccount.com';

    expect(await whoAmI(identity, { ...auth, impersonateServiceAccount: serviceAccount, scope })).toBe(ROLE);

    expect(issuer.calls.slice(-2)).toEqual([
      { kind: 'gcp-metadata-token', scopes: 'https://www.googleapis.com/auth/cloud-platform' },
      { kind: 'gcp-impersonate', serviceAccount, scope: [scope], bearerWasSourceToken: true },
    ]);
  });
});

describe('Azure Entra ID (@azure/identity, managed identity endpoint)', () => {
  it('connects with a token for the PostgreSQL scope, and asks the SDK again at the refresh point', async () => {
    const sdk = azureIssuer();
    let asked = 0;
    const counted: TokenIssuer = { provider: sdk.provider, issue: (r) => ((asked += 1), sdk.issue(r)) };
    const identity = identityOf('azure', counted);

    expect(await whoAmI(identity, auth)).toBe(ROLE);
    expect(issuer.calls.at(-1)).toEqual({
      kind: 'azure-msi',
      resource: 'https://ossrdbms-aad.database.windows.net',
      headerOk: true,
    });
    expect(await whoAmI(identity, auth)).toBe(ROLE);
    expect(asked).toBe(1);

    // MSAL keeps its own cache on the real clock, so it may answer from it; the source still asks.
    clock.offset += (LIFETIME_SECONDS / 2) * 1000;
    expect(await whoAmI(identity, auth)).toBe(ROLE);
    expect(asked).toBe(2);
  });
});

describe('AWS RDS IAM (@aws-sdk/rds-signer, container credentials endpoint)', () => {
  it('connects with a token presigned from the credentials the endpoint handed out', async () => {
    // RDS checks the SigV4 presign itself; here the role's password becomes whatever the signer produced.
    const signed: string[] = [];
    const signer = awsRdsIssuer({ region: 'eu-west-1' });
    const observed: TokenIssuer = {
      provider: signer.provider,
      issue: async (request) => {
        const token = await signer.issue(request);
        signed.push(token.token);
        await setRolePassword(token.token);
        return token;
      },
    };
    const identity = identityOf('aws', observed);

    expect(await whoAmI(identity, auth)).toBe(ROLE);

    const token = new URL(`https://${signed[0]!}`);
    expect(`${token.host}`).toBe(`localhost:${server.port}`);
    expect(token.searchParams.get('Action')).toBe('connect');
    expect(token.searchParams.get('DBUser')).toBe(ROLE);
    expect(token.searchParams.get('X-Amz-Credential')).toMatch(
      new RegExp(`^${issuer.awsAccessKeyId}/\\d{8}/eu-west-1/rds-db/aws4_request$`),
    );
    expect(token.searchParams.get('X-Amz-Expires')).toBe('900');
    expect(issuer.calls.some((call) => call.kind === 'aws-credentials')).toBe(true);

    // RDS tokens live 15 minutes: ten minutes on (the 5 min margin), the next connection signs anew.
    clock.offset += 10 * 60_000;
    expect(await whoAmI(identity, auth)).toBe(ROLE);
    expect(signed).toHaveLength(2);
  });
});

describe('failures', () => {
  it('names the provider and never shows a token when the provider cannot be reached', async () => {
    const tokensSoFar = [...issuer.issued];
    issuer.setDown(true);
    try {
      // A scope nobody asked for yet: MSAL has no cached token for it.
      for (const [provider, tokens, scope] of [
        ['gcp', gcpIssuer(), null],
        ['azure', azureIssuer(), 'https://down.example/.default'],
      ] as const) {
        const error = await whoAmI(identityOf(provider, tokens), { ...auth, scope }).catch(
          (caught: unknown) => caught,
        );
        expect(error).toBeInstanceOf(CloudIdentityError);
        const message = (error as Error).message;
        expect(message).toContain(
          `cloud workload identity (${provider}) for user ${ROLE} at localhost:${server.port}: no token:`,
        );
        for (const token of tokensSoFar) expect(message).not.toContain(token);
      }
    } finally {
      issuer.setDown(false);
    }
  }, 60_000);

  it('refuses what the provider does not honour, naming the field and the rule, before asking anyone', async () => {
    const calls = issuer.calls.length;
    const identity = identityOf('aws', awsRdsIssuer());
    const error = await whoAmI(identity, { ...auth, impersonateServiceAccount: 'x' }).catch(
      (caught: unknown) => caught,
    );

    expect(error).toBeInstanceOf(DatabaseError);
    expect((error as DatabaseError).message).toMatch(
      /^connection\.params\.auth\.impersonateServiceAccount is not supported with CLOUD_IDENTITY_PROVIDER=aws: /,
    );
    expect((error as DatabaseError).code).toBe('28000');
    expect(issuer.calls.length).toBe(calls);
  });
});

describe('the operator bounds the identity, not the tenant (ADR 0019)', () => {
  // A tenant's own server: no TLS, asks for the password in clear; the proxy records what the client sent.
  let tenant: PrivatePostgres;
  let tenantProxy: TcpProxy;
  beforeAll(async () => {
    tenant = await startPrivatePostgres('Tenant-admin-Pa55', { auth: 'password' });
    tenantProxy = await startTcpProxy(tenant.port);
  }, 120_000);
  afterAll(async () => {
    await tenantProxy?.dispose();
    await tenant?.dispose();
  }, 60_000);

  /** Runs `attempt` and returns its error, asserting that no provider was asked for a token. */
  async function refusedBeforeAnyToken(attempt: () => Promise<unknown>): Promise<DatabaseError> {
    const calls = issuer.calls.length;
    const issued = issuer.issued.length;
    const error = await attempt().then(
      () => new Error('connected'),
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(DatabaseError);
    expect((error as DatabaseError).code).toBe('28000');
    expect(issuer.calls.length).toBe(calls);
    expect(issuer.issued.length).toBe(issued);
    return error as DatabaseError;
  }

  it('a host the operator did not list gets no token, even with a certificate valid for it', async () => {
    const identity = identityOf('gcp', gcpIssuer());
    const error = await refusedBeforeAnyToken(() => whoAmI(identity, auth, { host: '127.0.0.1' }));
    expect(error.message).toBe(
      'connection.params.host is not allowed for cloud workload identity for namespace team-a: ' +
        'the operator lists the hosts a token may be sent to in CLOUD_IDENTITY_ALLOWED_HOSTS',
    );
  });

  it('a host listed for one namespace is refused to a policy of another', async () => {
    const identity = identityOf('gcp', gcpIssuer(), { ...BOUNDS, hosts: parseAllowList('team-a/localhost') });
    expect(await whoAmI(identity, auth, { namespace: 'team-a' })).toBe(ROLE);
    const error = await refusedBeforeAnyToken(() => whoAmI(identity, auth, { namespace: 'team-b' }));
    expect(error.message).toMatch(/^connection\.params\.host is not allowed .* for namespace team-b: /);
  });

  it('impersonation of an account the operator did not list, or listed for another namespace, is refused', async () => {
    const identity = identityOf('gcp', gcpIssuer({ iamEndpoint: issuer.url }));
    const other = { ...auth, impersonateServiceAccount: 'owner@local-project.iam.gserviceaccount.com' };
    const error = await refusedBeforeAnyToken(() => whoAmI(identity, other));
    expect(error.message).toBe(
      'connection.params.auth.impersonateServiceAccount owner@local-project.iam.gserviceaccount.com is not ' +
        'allowed for namespace team-a: the operator lists the accounts that may be impersonated in ' +
        'CLOUD_IDENTITY_ALLOWED_SERVICE_ACCOUNTS',
    );
    const listed = { ...auth, impersonateServiceAccount: 'db-admin@local-project.iam.gserviceaccount.com' };
    await refusedBeforeAnyToken(() => whoAmI(identity, listed, { namespace: 'team-b' }));
  });

  it('a scope other than the database-login scope is refused unless the operator lists it', async () => {
    const identity = identityOf('gcp', gcpIssuer());
    const wide = { ...auth, scope: 'https://www.googleapis.com/auth/cloud-platform' };
    const error = await refusedBeforeAnyToken(() => whoAmI(identity, wide));
    expect(error.message).toBe(
      'connection.params.auth.scope https://www.googleapis.com/auth/cloud-platform is not allowed: tokens are ' +
        'for the database-login scope https://www.googleapis.com/auth/sqlservice.login unless the operator ' +
        'lists more in CLOUD_IDENTITY_ALLOWED_SCOPES',
    );
    const login = { ...auth, scope: 'https://www.googleapis.com/auth/sqlservice.login' };
    expect(await whoAmI(identity, login)).toBe(ROLE);
  });

  it('a plain-text server asking for a password gets no token, whatever sslMode the policy says', async () => {
    // The operator even listed the host: the rule on verification still holds.
    const identity = identityOf('gcp', gcpIssuer(), { ...BOUNDS, hosts: parseAllowList('127.0.0.1') });
    const before = tenantProxy.sent().length;
    for (const sslMode of ['disable', 'allow', 'prefer', 'require', null]) {
      const aim = { host: '127.0.0.1', port: tenantProxy.port, sslMode };
      const error = await refusedBeforeAnyToken(() => whoAmI(identity, auth, aim));
      expect(error.message).toBe(
        'connection.params.sslMode must be verify-full with connection.params.auth: a cloud token is sent ' +
          'only to a server whose certificate was verified for its host',
      );
    }
    const sent = tenantProxy.sent().subarray(before).toString('latin1');
    for (const token of issuer.issued) expect(sent).not.toContain(token);
  });
});
