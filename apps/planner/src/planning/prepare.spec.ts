// preparePolicy: what stops a policy before the database (invalid content, missing Secrets) and which
// Secrets a blocked policy watches; generated password Secrets that must be created first.
import type { SecretLike } from '@rolepolicy/kube';
import { generatedSecretName } from '@rolepolicy/kube';
import { policy } from '../../../../libs/plan-lifecycle/src/test-support/fixtures.js';
import { fingerprintPays, peerClaims, preparePolicy } from './prepare.js';

const url = (db: string): SecretLike => ({
  metadata: { resourceVersion: '5' },
  stringData: { DATABASE_URL: `postgres://u:pw@Db.Example:5432/${db}` },
});
const lookup =
  (secrets: Record<string, SecretLike>) =>
  (name: string): SecretLike | undefined =>
    secrets[name];

describe('preparePolicy', () => {
  it('resolves target, claims and password sources; binds generated Secrets still to create as missing', () => {
    const self = policy({
      roles: [
        { name: 'app_user', login: true, password: { generate: { length: 24 } } },
        { name: 'svc', login: true, password: { secretRef: { name: 'pw' } } },
      ],
    } as never);
    const prepared = preparePolicy(
      self,
      lookup({
        'db-credentials': url('app'),
        pw: { metadata: { resourceVersion: '9' }, stringData: { svc: 'x' } },
      }),
    );
    if (!prepared.ok) throw new Error(prepared.error.message);
    expect(prepared.target).toBe('team-a/db-credentials/DATABASE_URL');
    expect(prepared.claims).toMatchObject({ databaseKey: 'db.example:5432/app', roles: ['app_user', 'svc'] });
    expect(prepared.passwordSources).toEqual({
      svc: 'pw:svc:9',
      app_user: `${generatedSecretName('orders', 'app_user')}:password:missing`,
    });
    expect(prepared.missingGenerated).toEqual([
      expect.objectContaining({
        role: 'app_user',
        secretName: generatedSecretName('orders', 'app_user'),
        length: 24,
      }),
    ]);
    expect(prepared.secretVersions).toEqual({ 'db-credentials': '5', pw: '9' });
  });

  it('fails permanently with SecretFetchFailed and watches the Secret so its creation retries', () => {
    const prepared = preparePolicy(policy(), lookup({}));
    expect(prepared).toMatchObject({
      ok: false,
      error: {
        class: 'permanent',
        reason: 'SecretFetchFailed',
        message: 'Secret team-a/db-credentials not found',
      },
      watchedSecrets: ['db-credentials'],
    });
  });

  it('reports invalid content as InvalidSpec with paths, and a missing referenced password Secret', () => {
    const invalid = preparePolicy(
      policy({ roles: [{ name: '' }] } as never),
      lookup({ 'db-credentials': url('a') }),
    );
    expect(invalid).toMatchObject({ ok: false, error: { reason: 'InvalidSpec' } });
    const noPassword = preparePolicy(
      policy({ roles: [{ name: 'svc', login: true, password: { secretRef: { name: 'pw' } } }] } as never),
      lookup({ 'db-credentials': url('a') }),
    );
    expect(noPassword).toMatchObject({
      ok: false,
      error: { reason: 'SecretFetchFailed', message: 'password of role svc: Secret team-a/pw not found' },
      watchedSecrets: ['db-credentials', 'pw'],
    });
  });

  it('says SecretMissing for an absent key, InvalidConnectionParams for an empty URL, InvalidSpec for an empty password', () => {
    expect(
      preparePolicy(policy(), lookup({ 'db-credentials': { stringData: { OTHER: 'x' } } })),
    ).toMatchObject({
      ok: false,
      error: { reason: 'SecretMissing' },
    });
    expect(
      preparePolicy(policy(), lookup({ 'db-credentials': { stringData: { DATABASE_URL: '' } } })),
    ).toMatchObject({ ok: false, error: { reason: 'InvalidConnectionParams' } });
    const empty = preparePolicy(
      policy({ roles: [{ name: 'svc', login: true, password: { secretRef: { name: 'pw' } } }] } as never),
      lookup({ 'db-credentials': url('a'), pw: { stringData: { svc: '' } } }),
    );
    expect(empty).toMatchObject({
      ok: false,
      error: {
        class: 'permanent',
        reason: 'InvalidSpec',
        message: 'Secret "team-a/pw" key "svc" for role "svc": password is empty',
      },
      watchedSecrets: ['db-credentials', 'pw'],
    });
  });

  it('gives peers no claims when they cannot be resolved', () => {
    expect(peerClaims(policy(), lookup({}))).toBeNull();
    expect(peerClaims(policy(), lookup({ 'db-credentials': url('b') }))?.claims.databaseKey).toBe(
      'db.example:5432/b',
    );
  });
});

describe('fingerprintPays', () => {
  const attempted = (generation: number, last?: number) =>
    policy(
      {},
      { generation },
      last === undefined ? undefined : ({ last_attempted_generation: last } as never),
    );

  it('not on a generation first pass: a new policy, or an edited spec', () => {
    expect(fingerprintPays(attempted(1))).toBe(false);
    expect(fingerprintPays(attempted(4, 3))).toBe(false);
  });

  it('on every later pass of the generation, so a converged policy records one', () => {
    expect(fingerprintPays(attempted(4, 4))).toBe(true);
  });
});
