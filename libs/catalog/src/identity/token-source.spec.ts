import { CloudIdentityError, TokenSource, type TokenIssuer, type TokenRequest } from './token-source.js';
import { authProblem, WorkloadIdentity } from './workload-identity.js';

const REQUEST: TokenRequest = {
  host: 'db.example',
  port: 5432,
  username: 'app',
  impersonateServiceAccount: null,
  scope: null,
};

/** An issuer that hands out `token-1`, `token-2`, ... each living `lifetimeMs` from the clock's now. */
function countingIssuer(clock: { now: number }, lifetimeMs: number) {
  const state = { issued: 0, down: false };
  const issuer: TokenIssuer = {
    provider: 'gcp',
    issue: async () => {
      if (state.down) throw new Error('connect ECONNREFUSED 127.0.0.1:1 (last token was token-1)');
      state.issued += 1;
      return { token: `token-${state.issued}`, expiresAt: clock.now + lifetimeMs };
    },
  };
  return { issuer, state };
}

describe('TokenSource', () => {
  it('reuses the token until the margin before expiry, then asks the provider again', async () => {
    const clock = { now: 1_000_000 };
    const { issuer, state } = countingIssuer(clock, 60 * 60_000);
    const source = new TokenSource(issuer, REQUEST, { marginMs: 5 * 60_000, now: () => clock.now });

    expect(await source.token()).toBe('token-1');
    clock.now += 54 * 60_000;
    expect(await source.token()).toBe('token-1');
    clock.now += 60_000; // 55 min: five minutes before expiry
    expect(await source.token()).toBe('token-2');
    expect(state.issued).toBe(2);
  });

  it('refreshes a short-lived token half-way through its life when the margin is longer than that', async () => {
    const clock = { now: 0 };
    const { issuer } = countingIssuer(clock, 120_000);
    const source = new TokenSource(issuer, REQUEST, { marginMs: 5 * 60_000, now: () => clock.now });

    expect(await source.token()).toBe('token-1');
    clock.now += 59_000;
    expect(await source.token()).toBe('token-1');
    clock.now += 1_000;
    expect(await source.token()).toBe('token-2');
  });

  it('lets concurrent callers share one provider request', async () => {
    const clock = { now: 0 };
    const { issuer, state } = countingIssuer(clock, 3_600_000);
    const source = new TokenSource(issuer, REQUEST, { marginMs: 60_000, now: () => clock.now });

    const tokens = await Promise.all([source.token(), source.token(), source.token()]);

    expect(tokens).toEqual(['token-1', 'token-1', 'token-1']);
    expect(state.issued).toBe(1);
  });

  it('keeps serving a still-valid token when a refresh fails, and fails clearly once it has expired', async () => {
    const clock = { now: 0 };
    const { issuer, state } = countingIssuer(clock, 600_000);
    const source = new TokenSource(issuer, REQUEST, { marginMs: 120_000, now: () => clock.now });
    expect(await source.token()).toBe('token-1');

    state.down = true;
    clock.now = 500_000; // past the refresh point, before expiry
    expect(await source.token()).toBe('token-1');

    clock.now = 600_000; // expired
    const error = await source.token().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(CloudIdentityError);
    const message = (error as Error).message;
    expect(message).toContain('cloud workload identity (gcp) for user app at db.example:5432');
    expect(message).toContain('ECONNREFUSED');
    expect(message).not.toContain('token-1');
    expect((error as CloudIdentityError).code).toBe('08001');
  });

  it('refuses a token that is already expired when it arrives', async () => {
    const issuer: TokenIssuer = { provider: 'azure', issue: async () => ({ token: 'old', expiresAt: 5 }) };
    const source = new TokenSource(issuer, REQUEST, { marginMs: 1, now: () => 10 });

    await expect(source.token()).rejects.toThrow(
      'cloud workload identity (azure) for user app at db.example:5432: the provider returned no usable token',
    );
  });
});

describe('WorkloadIdentity', () => {
  it('shares one token source per identity and keeps identities apart', async () => {
    const clock = { now: 0 };
    const { issuer, state } = countingIssuer(clock, 3_600_000);
    const identity = new WorkloadIdentity('gcp', issuer, { marginMs: 60_000, now: () => clock.now });
    const auth = { type: 'cloud_workload_identity' as const };
    const target = { host: 'h', port: 5432, username: 'app', auth };

    await identity.sourceFor(target).token();
    await identity.sourceFor({ ...target }).token();
    const other = await identity
      .sourceFor({ ...target, auth: { ...auth, impersonateServiceAccount: 'sa@p.iam.gserviceaccount.com' } })
      .token();

    expect(state.issued).toBe(2);
    expect(other).toBe('token-2');
  });
});

describe('authProblem', () => {
  const auth = { type: 'cloud_workload_identity' as const };
  const target = { host: 'h', port: 5432, username: 'app', auth };

  it('names the missing provider variable', () => {
    expect(authProblem(null, target)).toBe(
      'connection.params.auth.type cloud_workload_identity needs CLOUD_IDENTITY_PROVIDER (aws, gcp, azure) set on the inspector and the executor',
    );
  });

  it('needs the database user the token is issued for', () => {
    expect(authProblem('gcp', { ...target, username: null })).toContain(
      'connection.params.username (or usernameSecret) is required with connection.params.auth',
    );
  });

  it('honours impersonation and scope on gcp, scope on azure, neither on aws', () => {
    const both = { ...target, auth: { ...auth, impersonateServiceAccount: 'sa@p.iam', scope: 's' } };
    expect(authProblem('gcp', both)).toBeNull();
    expect(authProblem('azure', { ...target, auth: { ...auth, scope: 's' } })).toBeNull();
    expect(authProblem('azure', both)).toMatch(
      /^connection\.params\.auth\.impersonateServiceAccount is not supported with CLOUD_IDENTITY_PROVIDER=azure: /,
    );
    expect(authProblem('aws', { ...target, auth: { ...auth, scope: 's' } })).toMatch(
      /^connection\.params\.auth\.scope is not supported with CLOUD_IDENTITY_PROVIDER=aws: /,
    );
    expect(authProblem('aws', target)).toBeNull();
  });
});
