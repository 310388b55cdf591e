// A local stand-in for the cloud providers' token endpoints, for cloud workload identity tests: the GKE
// metadata server and the IAM Credentials API (Google), the App Service managed identity endpoint (Azure)
// and the container credentials endpoint (AWS). Every database token it issues is first made the password
// of a PostgreSQL role (`onToken`), standing in for the provider's IAM check at login.
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the issuer answered (no tokens: what was asked for, and by which identity). */
export type IssuerCall =
  | { readonly kind: 'gcp-metadata-token'; readonly scopes: string }
  | {
      readonly kind: 'gcp-impersonate';
      readonly serviceAccount: string;
      readonly scope: readonly string[];
      /** The bearer was the token the metadata server issued (the pod's identity). */
      readonly bearerWasSourceToken: boolean;
    }
  | { readonly kind: 'azure-msi'; readonly resource: string; readonly headerOk: boolean }
  | { readonly kind: 'aws-credentials' };

/** A running issuer. */
export type TokenIssuerSandbox = {
  readonly port: number;
  /** `127.0.0.1:<port>`, for GCE_METADATA_HOST. */
  readonly host: string;
  readonly url: string;
  /** Requests answered so far, in order. */
  readonly calls: IssuerCall[];
  /** Every token issued so far (to prove none reaches a log or an error). */
  readonly issued: string[];
  /** The AWS access key id the credentials endpoint hands out. */
  readonly awsAccessKeyId: string;
  /** The App Service identity header the Azure endpoint requires. */
  readonly azureIdentityHeader: string;
  /** While down, every request's connection is dropped without an answer (the provider is unreachable). */
  setDown(down: boolean): void;
  close(): Promise<void>;
};

/** Options: token lifetime and what to do with each database token before it is returned. */
export type TokenIssuerOptions = {
  readonly lifetimeSeconds: number;
  readonly onToken: (token: string) => Promise<void>;
};

/** Starts the issuer on a free loopback port. */
export async function startTokenIssuer(options: TokenIssuerOptions): Promise<TokenIssuerSandbox> {
  const calls: IssuerCall[] = [];
  const issued: string[] = [];
  const sourceTokens = new Set<string>();
  const awsAccessKeyId = `AKIALOCAL${randomBytes(6).toString('hex').toUpperCase()}`;
  const azureIdentityHeader = randomBytes(12).toString('hex');
  const token = async (prefix: string): Promise<string> => {
    const value = `${prefix}${randomBytes(24).toString('base64url')}`;
    issued.push(value);
    await options.onToken(value);
    return value;
  };
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const body = await readBody(req);
    const json = (status: number, value: unknown, headers: Record<string, string> = {}): void => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(JSON.stringify(value));
    };
    const google = { 'metadata-flavor': 'Google' };
    if (url.pathname === '/computeMetadata/v1/instance/service-accounts/default/token') {
      calls.push({ kind: 'gcp-metadata-token', scopes: url.searchParams.get('scopes') ?? '' });
      const value = await token('ya29.local-');
      sourceTokens.add(value);
      json(200, { access_token: value, expires_in: options.lifetimeSeconds, token_type: 'Bearer' }, google);
    } else if (url.pathname.startsWith('/computeMetadata/')) {
      // Detection pings and project lookups.
      res.writeHead(200, { 'content-type': 'text/plain', ...google });
      res.end(url.pathname.endsWith('project-id') ? 'local-project' : '');
    } else if (url.pathname.endsWith(':generateAccessToken')) {
      const serviceAccount = decodeURIComponent(url.pathname.split('/serviceAccounts/')[1] ?? '').replace(
        /:generateAccessToken$/,
        '',
      );
      const bearer = (req.headers.authorization ?? '').replace(/^Bearer /, '');
      const parsed = JSON.parse(body || '{}') as { scope?: string[] };
      calls.push({
        kind: 'gcp-impersonate',
        serviceAccount,
        scope: parsed.scope ?? [],
        bearerWasSourceToken: sourceTokens.has(bearer),
      });
      const value = await token('ya29.impersonated-');
      json(200, {
        accessToken: value,
        expireTime: new Date(Date.now() + options.lifetimeSeconds * 1000).toISOString(),
      });
    } else if (url.pathname === '/msi/token') {
      const headerOk = req.headers['x-identity-header'] === azureIdentityHeader;
      calls.push({ kind: 'azure-msi', resource: url.searchParams.get('resource') ?? '', headerOk });
      if (!headerOk) return json(401, { error: 'bad identity header' });
      const value = await token('eyJ0eXAiOiJKV1Qi.local-');
      json(200, {
        access_token: value,
        expires_on: String(Math.floor(Date.now() / 1000) + options.lifetimeSeconds),
        resource: url.searchParams.get('resource'),
        token_type: 'Bearer',
      });
    } else if (url.pathname === '/aws/credentials') {
      calls.push({ kind: 'aws-credentials' });
      // Credentials, not a database token: the RDS signer presigns the token locally with them.
      json(200, {
        AccessKeyId: awsAccessKeyId,
        SecretAccessKey: randomBytes(20).toString('base64'),
        Token: randomBytes(32).toString('base64'),
        Expiration: new Date(Date.now() + 3_600_000).toISOString(),
      });
    } else {
      json(404, { error: `no such endpoint ${url.pathname}` });
    }
  };
  let down = false;
  const server = createServer((req, res) => {
    if (down) {
      req.socket.destroy();
      return;
    }
    handle(req, res).catch(() => {
      res.writeHead(500);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    host: `127.0.0.1:${port}`,
    url: `http://127.0.0.1:${port}`,
    calls,
    issued,
    awsAccessKeyId,
    azureIdentityHeader,
    setDown: (value) => {
      down = value;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}
