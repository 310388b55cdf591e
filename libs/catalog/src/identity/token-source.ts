// The token-provider port of cloud workload identity: an issuer (one adapter per provider SDK) hands out
// short-lived database tokens; a TokenSource caches one and refreshes it a margin before it expires, so
// every new pooled connection gets a valid token. No I/O here; the clock is injected for tests.
import { redactText, SafeError } from '../redaction.js';

/** The spec's `connection.params.auth` (type is the only enum value today). */
export interface WorkloadAuth {
  readonly type: 'cloud_workload_identity';
  /** Identity to impersonate; null or absent: the pod's bound identity. */
  readonly impersonateServiceAccount?: string | null;
  /** Scope requested for the access token; null or absent: the provider's database default. */
  readonly scope?: string | null;
}

/** What a token is for: the database user at host:port, as the workload's identity (or an impersonated one). */
export interface TokenRequest {
  readonly host: string;
  readonly port: number;
  readonly username: string;
  readonly impersonateServiceAccount: string | null;
  readonly scope: string | null;
}

/** A short-lived database password and when it stops being accepted (epoch milliseconds). */
export interface IssuedToken {
  readonly token: string;
  readonly expiresAt: number;
}

/** The port: one provider SDK behind it. Implementations never log or throw the token. */
export interface TokenIssuer {
  /** The provider's name as configured (`aws`, `gcp`, `azure`), for error messages. */
  readonly provider: string;
  issue(request: TokenRequest): Promise<IssuedToken>;
}

/**
 * A token could not be had; the message names the provider and user, never a token. Its code is SQLSTATE
 * 08001 (the client could not establish the connection), so callers retry it like an unreachable server.
 */
export class CloudIdentityError extends SafeError {
  override readonly name = 'CloudIdentityError';
  readonly code = '08001';
}

/** Refresh policy: refresh `marginMs` before expiry, but never later than half-way through a short token's life. */
export interface RefreshPolicy {
  readonly marginMs: number;
  readonly now: () => number;
}

/** Default: refresh five minutes before expiry (RDS tokens live 15 min, Google and Entra tokens ~1 h). */
export const DEFAULT_REFRESH: RefreshPolicy = { marginMs: 5 * 60_000, now: () => Date.now() };

type Cached = { readonly token: string; readonly refreshAt: number; readonly expiresAt: number };

/**
 * One identity's token, cached. `token()` returns the cached one until its refresh point, then asks the
 * issuer again (one request at a time; concurrent callers share it). A failed refresh while the cached
 * token is still valid returns the cached token; otherwise it throws a CloudIdentityError.
 */
export class TokenSource {
  private cached: Cached | null = null;
  private pending: Promise<string> | null = null;
  /** The tokens this source handed out most recently (for redaction of errors); at most two. */
  readonly recent: string[] = [];

  constructor(
    private readonly issuer: TokenIssuer,
    private readonly request: TokenRequest,
    private readonly policy: RefreshPolicy = DEFAULT_REFRESH,
  ) {}

  /** A token valid now (refreshed when past its refresh point). */
  token(): Promise<string> {
    const now = this.policy.now();
    const cached = this.cached;
    if (cached !== null && now < cached.refreshAt) return Promise.resolve(cached.token);
    this.pending ??= this.refresh(now).finally(() => {
      this.pending = null;
    });
    return this.pending;
  }

  private async refresh(now: number): Promise<string> {
    let issued: IssuedToken;
    try {
      issued = await this.issuer.issue(this.request);
    } catch (error) {
      const stale = this.cached;
      if (stale !== null && this.policy.now() < stale.expiresAt) return stale.token;
      throw this.failure(error);
    }
    if (issued.token === '' || !(issued.expiresAt > now)) {
      throw new CloudIdentityError(`${this.describe()}: the provider returned no usable token`);
    }
    const lifetime = issued.expiresAt - now;
    const refreshAt = issued.expiresAt - Math.min(this.policy.marginMs, lifetime / 2);
    this.cached = { token: issued.token, refreshAt, expiresAt: issued.expiresAt };
    this.recent.unshift(issued.token);
    this.recent.splice(2);
    return issued.token;
  }

  private failure(error: unknown): CloudIdentityError {
    const raw = error instanceof Error ? error.message || error.name : String(error);
    // An SDK message may quote a response; keep it short and free of any token this source knows.
    const detail = redactText(raw, this.recent).replace(/\s+/g, ' ').slice(0, 300);
    return new CloudIdentityError(`${this.describe()}: no token: ${detail}`);
  }

  private describe(): string {
    const as = this.request.impersonateServiceAccount;
    return (
      `cloud workload identity (${this.issuer.provider}) for user ${this.request.username} at ` +
      `${this.request.host}:${this.request.port}${as === null ? '' : ` impersonating ${as}`}`
    );
  }
}
