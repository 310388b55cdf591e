// Which provider a deployment uses (CLOUD_IDENTITY_PROVIDER), what each accepts of `connection.params.auth`,
// the operator's bounds on where a token may go (ADR 0019), and one token source per identity per process.
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

/** Cloud SQL IAM database authentication: the login scope. */
export const GCP_DEFAULT_SCOPE = 'https://www.googleapis.com/auth/sqlservice.login';
/** Azure Database for PostgreSQL (Entra ID authentication). */
export const AZURE_DEFAULT_SCOPE = 'https://ossrdbms-aad.database.windows.net/.default';
/** Each provider's database-login scope: the only scope a policy gets unless the operator allows more. */
const LOGIN_SCOPE: Record<CloudIdentityProvider, string | null> = {
  aws: null,
  gcp: GCP_DEFAULT_SCOPE,
  azure: AZURE_DEFAULT_SCOPE,
};

/** One allow-list entry: a value, for every namespace (null) or for one. */
export interface AllowEntry {
  readonly namespace: string | null;
  readonly value: string;
}

/**
 * The operator's bounds (CLOUD_IDENTITY_ALLOWED_HOSTS, _SERVICE_ACCOUNTS, _SCOPES): a tenant's policy may aim
 * the shared pod identity only at these hosts, impersonate only these accounts, and ask only these scopes.
 */
export interface IdentityBounds {
  /** `host` or `*.suffix` (any host under suffix), case-insensitive. */
  readonly hosts: readonly AllowEntry[];
  readonly serviceAccounts: readonly AllowEntry[];
  /** Scopes besides the provider's login scope (cluster-wide). */
  readonly scopes: readonly string[];
}

/** Nothing allowed: every `auth` connection is refused. */
export const NO_BOUNDS: IdentityBounds = { hosts: [], serviceAccounts: [], scopes: [] };

/**
 * Parses a comma-separated allow-list of `value` or `namespace/value` entries (blanks ignored). A value holds
 * no `/` (hosts, service account emails); scopes are parsed with `namespaced: false` (URLs hold `/`).
 */
export function parseAllowList(raw: string | undefined, namespaced = true): readonly AllowEntry[] {
  return (raw ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '')
    .map((item) => {
      const slash = namespaced ? item.indexOf('/') : -1;
      return slash < 0
        ? { namespace: null, value: item }
        : { namespace: item.slice(0, slash), value: item.slice(slash + 1) };
    });
}

function applies(entry: AllowEntry, namespace: string | null): boolean {
  return entry.namespace === null || entry.namespace === namespace;
}

function hostMatches(pattern: string, host: string): boolean {
  const want = pattern.toLowerCase();
  const have = host.toLowerCase().replace(/\.$/, '');
  // `*.example.com` matches any name under example.com (not example.com itself), as a certificate would.
  return want.startsWith('*.')
    ? have.endsWith(want.slice(1)) && have.length > want.length - 1
    : have === want;
}

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

/** Where the connection comes from and how it is protected, for the operator's bounds. */
export interface IdentityContext {
  /** Namespace of the policy the connection belongs to (null: only cluster-wide entries apply). */
  readonly namespace: string | null;
  /** The connection's sslMode as written (null: the default). */
  readonly sslMode: string | null | undefined;
}

/**
 * Why `target` cannot use cloud workload identity under `provider` and the operator's `bounds` (naming the field
 * and the rule), or null. Pure: the same check runs before a pool is opened, so a refusal never reaches the
 * provider. Without `bounds` only what the provider honours is checked.
 */
export function authProblem(
  provider: CloudIdentityProvider | null,
  target: IdentityTarget,
  bounds?: { readonly bounds: IdentityBounds; readonly context: IdentityContext },
): string | null {
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
  return bounds === undefined ? null : boundsProblem(provider, target, bounds.bounds, bounds.context);
}

function boundsProblem(
  provider: CloudIdentityProvider,
  target: IdentityTarget,
  bounds: IdentityBounds,
  context: IdentityContext,
): string | null {
  const where = context.namespace === null ? 'cluster-wide' : `for namespace ${context.namespace}`;
  if (context.sslMode !== 'verify-full') {
    return (
      'connection.params.sslMode must be verify-full with connection.params.auth: a cloud token is sent only ' +
      'to a server whose certificate was verified for its host'
    );
  }
  const hosts = bounds.hosts.filter((entry) => applies(entry, context.namespace));
  if (!hosts.some((entry) => hostMatches(entry.value, target.host))) {
    return (
      // The host is not quoted: it may come from hostSecret, and a refusal lands in status and Events.
      `connection.params.host is not allowed for cloud workload identity ${where}: ` +
      'the operator lists the hosts a token may be sent to in CLOUD_IDENTITY_ALLOWED_HOSTS'
    );
  }
  const account = target.auth.impersonateServiceAccount;
  if (account != null) {
    const allowed = bounds.serviceAccounts.filter((entry) => applies(entry, context.namespace));
    if (!allowed.some((entry) => entry.value.toLowerCase() === account.toLowerCase())) {
      return (
        `connection.params.auth.impersonateServiceAccount ${account} is not allowed ${where}: the operator ` +
        'lists the accounts that may be impersonated in CLOUD_IDENTITY_ALLOWED_SERVICE_ACCOUNTS'
      );
    }
  }
  const scope = target.auth.scope;
  if (scope != null && scope !== LOGIN_SCOPE[provider] && !bounds.scopes.includes(scope)) {
    return (
      `connection.params.auth.scope ${scope} is not allowed: tokens are for the database-login scope ` +
      `${LOGIN_SCOPE[provider] ?? '(none)'} unless the operator lists more in CLOUD_IDENTITY_ALLOWED_SCOPES`
    );
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
    /** The operator's bounds; the default allows nothing. */
    readonly bounds: IdentityBounds = NO_BOUNDS,
  ) {}

  /** {@link authProblem} under this identity's provider and bounds. */
  problem(target: IdentityTarget, context: IdentityContext): string | null {
    return authProblem(this.provider, target, { bounds: this.bounds, context });
  }

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
