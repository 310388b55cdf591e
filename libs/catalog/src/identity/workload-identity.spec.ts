// The operator's bounds on cloud workload identity (ADR 0019) as pure rules: allow-list parsing, host patterns,
// per-namespace entries, the login scope, verify-full only, and a provider without a host list refused at start.
import { workloadIdentityFromConfig } from './providers.js';
import { authProblem, parseAllowList, type IdentityBounds } from './workload-identity.js';

const auth = { type: 'cloud_workload_identity' as const };
const target = { host: 'orders.abc.eu-west-1.rds.amazonaws.com', port: 5432, username: 'app', auth };
const bounds: IdentityBounds = {
  hosts: parseAllowList('*.eu-west-1.rds.amazonaws.com, team-a/orders.internal'),
  serviceAccounts: parseAllowList('team-a/db@p.iam.gserviceaccount.com'),
  scopes: [],
};
const check = (
  provider: 'aws' | 'gcp' | 'azure',
  over: Partial<typeof target> & { auth?: typeof target.auth & Record<string, unknown> },
  namespace: string | null = 'team-a',
  sslMode: string | null = 'verify-full',
) => authProblem(provider, { ...target, ...over }, { bounds, context: { namespace, sslMode } });

describe('parseAllowList', () => {
  it('reads value and namespace/value entries, ignoring blanks', () => {
    expect(parseAllowList(' a.example ,, team-a/b.example ')).toEqual([
      { namespace: null, value: 'a.example' },
      { namespace: 'team-a', value: 'b.example' },
    ]);
    expect(parseAllowList('https://x.example/.default', false)).toEqual([
      { namespace: null, value: 'https://x.example/.default' },
    ]);
    expect(parseAllowList(undefined)).toEqual([]);
  });
});

describe('authProblem under the operator bounds', () => {
  it('allows a host under a *.suffix entry, case-insensitively, and nothing beside it', () => {
    expect(check('aws', {})).toBeNull();
    expect(check('aws', { host: 'ORDERS.abc.EU-WEST-1.rds.amazonaws.com' })).toBeNull();
    for (const host of [
      'eu-west-1.rds.amazonaws.com',
      'evil-eu-west-1.rds.amazonaws.com',
      'x.rds.amazonaws.com',
    ]) {
      const problem = check('aws', { host });
      expect(problem).toMatch(/^connection\.params\.host is not allowed/);
      // The host may come from hostSecret: a refusal reaches status and Events, so it never quotes it.
      expect(problem).not.toContain(host);
    }
  });

  it('applies namespace entries to that namespace only', () => {
    expect(check('aws', { host: 'orders.internal' }, 'team-a')).toBeNull();
    expect(check('aws', { host: 'orders.internal' }, 'team-b')).toContain('for namespace team-b');
    expect(check('aws', { host: 'orders.internal' }, null)).toContain('cluster-wide');
  });

  it('requires sslMode verify-full, whatever else the policy says', () => {
    for (const mode of [null, 'disable', 'allow', 'prefer', 'require', 'verify-ca']) {
      expect(check('aws', {}, 'team-a', mode)).toMatch(/^connection\.params\.sslMode must be verify-full/);
    }
  });

  it('allows impersonation of listed accounts only, in their namespace', () => {
    const as = (account: string) => ({ auth: { ...auth, impersonateServiceAccount: account } });
    expect(check('gcp', as('db@p.iam.gserviceaccount.com'))).toBeNull();
    expect(check('gcp', as('db@p.iam.gserviceaccount.com'), 'team-b')).toMatch(/impersonateServiceAccount/);
    expect(check('gcp', as('owner@p.iam.gserviceaccount.com'))).toMatch(
      /CLOUD_IDENTITY_ALLOWED_SERVICE_ACCOUNTS$/,
    );
  });

  it('accepts the provider’s login scope (or none) and refuses any other unless listed', () => {
    const scoped = (scope: string) => ({ auth: { ...auth, scope } });
    expect(check('gcp', scoped('https://www.googleapis.com/auth/sqlservice.login'))).toBeNull();
    expect(check('azure', scoped('https://ossrdbms-aad.database.windows.net/.default'))).toBeNull();
    expect(check('azure', scoped('https://management.azure.com/.default'))).toMatch(
      /CLOUD_IDENTITY_ALLOWED_SCOPES$/,
    );
    const wider = { ...bounds, scopes: ['https://management.azure.com/.default'] };
    expect(
      authProblem(
        'azure',
        { ...target, ...scoped('https://management.azure.com/.default') },
        {
          bounds: wider,
          context: { namespace: 'team-a', sslMode: 'verify-full' },
        },
      ),
    ).toBeNull();
  });
});

describe('workloadIdentityFromConfig', () => {
  it('refuses a provider without CLOUD_IDENTITY_ALLOWED_HOSTS at start', () => {
    expect(() => workloadIdentityFromConfig({ CLOUD_IDENTITY_PROVIDER: 'gcp' })).toThrow(
      'CLOUD_IDENTITY_ALLOWED_HOSTS is required when CLOUD_IDENTITY_PROVIDER is set',
    );
    const identity = workloadIdentityFromConfig({
      CLOUD_IDENTITY_PROVIDER: 'gcp',
      CLOUD_IDENTITY_ALLOWED_HOSTS: 'team-a/db.internal',
      CLOUD_IDENTITY_ALLOWED_SCOPES: 'https://x.example/.default',
    });
    expect(identity?.bounds).toEqual({
      hosts: [{ namespace: 'team-a', value: 'db.internal' }],
      serviceAccounts: [],
      scopes: ['https://x.example/.default'],
    });
    expect(workloadIdentityFromConfig({})).toBeNull();
  });
});
