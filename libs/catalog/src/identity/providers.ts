// The three adapters of the TokenIssuer port, each over its provider's SDK, and the factory that picks one
// from CLOUD_IDENTITY_PROVIDER. Endpoints come from each SDK's own environment variables (docs/cloud-identity.md).
// The SDKs load on first use: a deployment without cloud identity never pays for them.
import type { TokenCredential } from '@azure/identity';
import { DEFAULT_REFRESH, type IssuedToken, type TokenIssuer, type TokenRequest } from './token-source.js';
import {
  AZURE_DEFAULT_SCOPE,
  GCP_DEFAULT_SCOPE,
  parseAllowList,
  WorkloadIdentity,
  type CloudIdentityProvider,
  type IdentityBounds,
  CLOUD_IDENTITY_PROVIDERS,
} from './workload-identity.js';

/** RDS IAM auth tokens are presigned URLs valid for 15 minutes. */
const RDS_TOKEN_LIFETIME_MS = 15 * 60_000;
/** The source identity must be allowed to call the IAM Credentials API to impersonate. */
const GCP_IMPERSONATION_SOURCE_SCOPE = 'https://www.googleapis.com/auth/cloud-platform';

/**
 * AWS RDS IAM: the token is signed locally (SigV4 presign of `rds-db:connect`) with credentials from the
 * default chain (IRSA web identity, EKS Pod Identity / container endpoint, instance profile).
 */
export function awsRdsIssuer(options: { readonly region?: string } = {}): TokenIssuer {
  return {
    provider: 'aws',
    async issue(request: TokenRequest): Promise<IssuedToken> {
      const { Signer } = await import('@aws-sdk/rds-signer');
      const signer = new Signer({
        hostname: request.host,
        port: request.port,
        username: request.username,
        ...(options.region === undefined ? {} : { region: options.region }),
      });
      // Signed now: valid for the presign lifetime from this instant.
      const signedAt = Date.now();
      return { token: await signer.getAuthToken(), expiresAt: signedAt + RDS_TOKEN_LIFETIME_MS };
    },
  };
}

/**
 * Google Cloud SQL IAM: an OAuth access token of the pod's identity (GKE metadata server, or Application
 * Default Credentials), or of `impersonateServiceAccount` through the IAM Credentials API.
 */
export function gcpIssuer(options: { readonly iamEndpoint?: string } = {}): TokenIssuer {
  return {
    provider: 'gcp',
    async issue(request: TokenRequest): Promise<IssuedToken> {
      const scope = request.scope ?? GCP_DEFAULT_SCOPE;
      const target = request.impersonateServiceAccount;
      const { GoogleAuth, Impersonated } = await import('google-auth-library');
      const auth = new GoogleAuth({ scopes: [target === null ? scope : GCP_IMPERSONATION_SOURCE_SCOPE] });
      const source = await auth.getClient();
      const client =
        target === null
          ? source
          : new Impersonated({
              sourceClient: source,
              targetPrincipal: target,
              targetScopes: [scope],
              lifetime: 3600,
              delegates: [],
              ...(options.iamEndpoint === undefined ? {} : { endpoint: options.iamEndpoint }),
            });
      const { token } = await client.getAccessToken();
      const expiresAt = client.credentials.expiry_date;
      if (token == null || token === '' || expiresAt == null)
        throw new Error('the token response had no token or expiry');
      return { token, expiresAt };
    },
  };
}

/**
 * Azure Entra ID: a token from DefaultAzureCredential (AKS workload identity, managed identity; narrow the
 * chain with AZURE_TOKEN_CREDENTIALS) for `scope` (default the Azure Database for PostgreSQL scope).
 */
export function azureIssuer(): TokenIssuer {
  let credential: TokenCredential | null = null;
  return {
    provider: 'azure',
    async issue(request: TokenRequest): Promise<IssuedToken> {
      if (credential === null) {
        const { DefaultAzureCredential } = await import('@azure/identity');
        credential = new DefaultAzureCredential();
      }
      const got = await credential.getToken(request.scope ?? AZURE_DEFAULT_SCOPE);
      if (got === null) throw new Error('no credential in the chain returned a token');
      return { token: got.token, expiresAt: got.expiresOnTimestamp };
    },
  };
}

/** Parses CLOUD_IDENTITY_PROVIDER (unset or `none`: null). */
export function cloudIdentityProvider(value: string | undefined): CloudIdentityProvider | null {
  if (value === undefined || value === '' || value === 'none') return null;
  const found = CLOUD_IDENTITY_PROVIDERS.find((name) => name === value);
  if (found === undefined) {
    throw new Error(`CLOUD_IDENTITY_PROVIDER must be one of ${CLOUD_IDENTITY_PROVIDERS.join(', ')}`);
  }
  return found;
}

/** The service's workload identity from its configuration; null when CLOUD_IDENTITY_PROVIDER is unset. */
export function workloadIdentityFromConfig(config: {
  readonly CLOUD_IDENTITY_PROVIDER?: string | undefined;
  readonly CLOUD_IDENTITY_AWS_REGION?: string | undefined;
  readonly CLOUD_IDENTITY_GCP_IAM_ENDPOINT?: string | undefined;
  readonly CLOUD_IDENTITY_ALLOWED_HOSTS?: string | undefined;
  readonly CLOUD_IDENTITY_ALLOWED_SERVICE_ACCOUNTS?: string | undefined;
  readonly CLOUD_IDENTITY_ALLOWED_SCOPES?: string | undefined;
}): WorkloadIdentity | null {
  const provider = cloudIdentityProvider(config.CLOUD_IDENTITY_PROVIDER);
  const bounds: IdentityBounds = {
    hosts: parseAllowList(config.CLOUD_IDENTITY_ALLOWED_HOSTS),
    serviceAccounts: parseAllowList(config.CLOUD_IDENTITY_ALLOWED_SERVICE_ACCOUNTS),
    scopes: parseAllowList(config.CLOUD_IDENTITY_ALLOWED_SCOPES, false).map((entry) => entry.value),
  };
  if (provider !== null && bounds.hosts.length === 0) {
    // Nothing could use the identity: say so at start rather than refuse every connection later.
    throw new Error(
      'CLOUD_IDENTITY_ALLOWED_HOSTS is required when CLOUD_IDENTITY_PROVIDER is set: list the hosts a token may be sent to',
    );
  }
  switch (provider) {
    case null:
      return null;
    case 'aws': {
      const region = config.CLOUD_IDENTITY_AWS_REGION;
      return new WorkloadIdentity(
        provider,
        awsRdsIssuer(region === undefined ? {} : { region }),
        DEFAULT_REFRESH,
        bounds,
      );
    }
    case 'gcp': {
      const iamEndpoint = config.CLOUD_IDENTITY_GCP_IAM_ENDPOINT;
      const issuer = gcpIssuer(iamEndpoint === undefined ? {} : { iamEndpoint });
      return new WorkloadIdentity(provider, issuer, DEFAULT_REFRESH, bounds);
    }
    case 'azure':
      return new WorkloadIdentity(provider, azureIssuer(), DEFAULT_REFRESH, bounds);
  }
}
