// Which provider a deployment uses (CLOUD_IDENTITY_PROVIDER), what each accepts of `connection.params.auth`,
// and the per-process registry of token sources: one per identity, shared by every pool that uses it.
import { createHash } from 'node:crypto';
import {
  DEFAULT_REFRESH,
  TokenSource,
  type RefreshPolicy,
  type TokenIssuer,
  type WorkloadAuth,
} from './token-source.js';

/** Values of CLOUD_IDENTITY_PROVIDER. */
export const CLOUD_IDENTITY_PROVIDERS = ['aws', 'gcp', 'azure'] as const;
/** One of {@link CLOUD_IDENTITY_PROVIDERS}. */
export type CloudIdentityProvider = (typeof CLOUD_IDENTITY_PROVIDERS)[number];

/** What each provider honours of `auth` (the rest is refused by {@link authProblem}). */
const HONOURS: Record<CloudIdentityProvider, { impersonation: boolean; scope: boolean; why: string }> = {
  // The RDS signer presigns with the pod's credentials; there is no token scope and no impersonation hop.
  aws: {
    impersonation: false,
    scope: false,
    why: 'RDS IAM tokens are signed with the pod’s own AWS credentials',
  },
  gcp: { impersonation: true, scope: true, why: '' },
  // Entra ID has no service-account impersonation; the pod's workload or managed identity is used.
  azure: { impersonation: false, scope: true, why: 'Entra ID tokens are issued to the pod’s own identity' },
};

/** Where a token is needed: the connection's user at host:port, with the policy's `auth`. */
export interface IdentityTarget {
  readonly host: string;
  readonly port: number;
  readonly username: string | null | undefined;
  readonly auth: WorkloadAuth;
}

/**
 * Why `target` cannot use cloud workload identity under `provider` (naming the field and the rule), or null.
 * Pure: the same check runs before a pool is opened, so a refusal never reaches the provider.
 */
export function authProblem(provider: CloudIdentityProvider | null, target: IdentityTarget): string | null {
  if (provider === null) {
    return (
      'connection.params.auth.type cloud_workload_identity needs CLOUD_IDENTITY_PROVIDER ' +
      `(${CLOUD_IDENTITY_PROVIDERS.join(', ')}) set on the inspector and the executor`
    );
  }
  if (target.username == null || target.username === '') {
    return 'connection.params.username (or usernameSecret) is required with connection.params.auth: the token is issued for that database user';
  }
  const honours = HONOURS[provider];
  if (target.auth.impersonateServiceAccount != null && !honours.impersonation) {
    return `connection.params.auth.impersonateServiceAccount is not supported with CLOUD_IDENTITY_PROVIDER=${provider}: ${honours.why}`;
  }
  if (target.auth.scope != null && !honours.scope) {
    return `connection.params.auth.scope is not supported with CLOUD_IDENTITY_PROVIDER=${provider}: ${honours.why}`;
  }
  return null;
}

/** The process's token sources: one per (host, port, user, impersonation, scope), refreshed before expiry. */
export class WorkloadIdentity {
  private readonly sources = new Map<string, TokenSource>();

  constructor(
    readonly provider: CloudIdentityProvider,
    private readonly issuer: TokenIssuer,
    private readonly policy: RefreshPolicy = DEFAULT_REFRESH,
  ) {}

  /** The token source of `target`; throws nothing (call {@link authProblem} first). */
  sourceFor(target: IdentityTarget): TokenSource {
    const request = {
      host: target.host,
      port: target.port,
      username: target.username ?? '',
      impersonateServiceAccount: target.auth.impersonateServiceAccount ?? null,
      scope: target.auth.scope ?? null,
    };
    const key = createHash('sha256').update(JSON.stringify(request)).digest('hex');
    let source = this.sources.get(key);
    if (source === undefined) {
      source = new TokenSource(this.issuer, request, this.policy);
      this.sources.set(key, source);
    }
    return source;
  }
}
