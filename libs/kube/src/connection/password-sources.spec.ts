// Password sources: DNS-safe generated Secret names, source versions, and reading a pinned version.
import {
  generatedSecretName,
  passwordSecretRefs,
  passwordSourceVersion,
  readPasswordForSource,
  resolvePasswordSources,
  type PasswordRole,
} from './password-sources.js';
import type { SecretLike, SecretLookup } from './secret-data.js';

const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');
const lookup =
  (secrets: Record<string, SecretLike>): SecretLookup =>
  (name) =>
    secrets[name];
const DNS = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

describe('generatedSecretName', () => {
  it('keeps a valid default name unchanged', () => {
    expect(generatedSecretName('shop', 'app-user')).toBe('shop-gen-app-user');
  });

  it('lowercases, replaces _ and adds a stable hash suffix when it had to change the name', () => {
    const name = generatedSecretName('shop', 'App_User');
    expect(name).toMatch(/^shop-gen-app-user-[0-9a-f]{8}$/);
    expect(generatedSecretName('shop', 'App_User')).toBe(name);
    expect(name).not.toBe(generatedSecretName('shop', 'app_user'));
    expect(name).not.toBe('shop-gen-app-user');
  });

  it('always gives a DNS-1123 subdomain of at most 253 characters', () => {
    for (const role of ['_x_', 'Ünïcode', '$weird$', 'a'.repeat(300), 'ROLE.NAME', '__']) {
      const name = generatedSecretName('p', role);
      expect(name).toMatch(DNS);
      expect(name.length).toBeLessThanOrEqual(253);
    }
  });
});

const roles: PasswordRole[] = [
  { name: 'zeta', password: { kind: 'secret_ref', secretName: 'pw', secretKey: 'zeta' } },
  {
    name: 'App_User',
    password: { kind: 'generate', secretName: 'shop-gen-App_User', secretKey: 'password', length: 24 },
  },
  { name: 'custom', password: { kind: 'generate', secretName: 'my-secret', secretKey: 'pw', length: 32 } },
  { name: 'ext', external: true, password: { kind: 'secret_ref', secretName: 'pw', secretKey: 'ext' } },
  { name: 'nopw', password: null },
];

describe('passwordSecretRefs', () => {
  it('lists password-managed roles sorted, sanitising only the default generated name', () => {
    const refs = passwordSecretRefs('shop', roles);
    expect(refs.map((r) => r.role)).toEqual(['App_User', 'custom', 'zeta']);
    expect(refs[0]).toEqual({
      role: 'App_User',
      kind: 'generate',
      secretName: generatedSecretName('shop', 'App_User'),
      secretKey: 'password',
      length: 24,
    });
    expect(refs[1]).toMatchObject({ secretName: 'my-secret', secretKey: 'pw', length: 32 });
    expect(refs[2]).toEqual({
      role: 'zeta',
      kind: 'secret_ref',
      secretName: 'pw',
      secretKey: 'zeta',
      length: null,
    });
  });

  it("reads the CRD's literal default {policy}-gen-{role} as the default name", () => {
    const refs = passwordSecretRefs('shop', [
      {
        name: 'Tmpl_Role',
        password: { kind: 'generate', secretName: '{policy}-gen-{role}', secretKey: 'password', length: 16 },
      },
    ]);
    expect(refs[0]?.secretName).toBe(generatedSecretName('shop', 'Tmpl_Role'));
    expect(refs[0]?.secretName).toMatch(DNS);
  });
});

describe('resolvePasswordSources', () => {
  const gen = generatedSecretName('shop', 'App_User');
  const secrets: Record<string, SecretLike> = {
    pw: { metadata: { name: 'pw', resourceVersion: '10' }, data: { zeta: b64('zeta-password') } },
    [gen]: {
      metadata: { name: gen, resourceVersion: '11' },
      data: { password: b64('generated-secret-value') },
    },
  };

  it('gives secretName:secretKey:resourceVersion per role and the Secret versions', () => {
    const r = resolvePasswordSources('ns', passwordSecretRefs('shop', roles), lookup(secrets));
    // A generated Secret that does not exist yet is bound as due: the executor creates it under its lock.
    expect(r.sources).toEqual({
      App_User: `${gen}:password:11`,
      custom: 'my-secret:pw:missing',
      zeta: 'pw:zeta:10',
    });
    expect(r.secretVersions).toEqual({ pw: '10', [gen]: '11' });
    expect(r.missingGenerated.map((m) => m.role)).toEqual(['custom']);
    expect(r.failures).toEqual([]);
    expect(JSON.stringify(r)).not.toContain('secret-value');
  });

  it('reports a missing referenced Secret or key as a failure naming role, Secret and key', () => {
    const r = resolvePasswordSources('ns', passwordSecretRefs('shop', roles), lookup({}));
    expect(r.failures).toEqual([
      { role: 'zeta', reason: 'SecretMissing', message: 'password of role zeta: Secret ns/pw not found' },
    ]);
    expect(r.missingGenerated.map((m) => m.role)).toEqual(['App_User', 'custom']);
    const noKey = resolvePasswordSources(
      'ns',
      passwordSecretRefs('shop', roles.slice(0, 1)),
      lookup({ pw: { metadata: { resourceVersion: '1' }, data: {} } }),
    );
    expect(noKey.failures).toEqual([
      {
        role: 'zeta',
        reason: 'SecretKeyMissing',
        message: 'password of role zeta: Secret ns/pw has no key zeta',
      },
    ]);
  });

  it('reports an empty password value as a failure naming the Secret and key (never set or skipped silently)', () => {
    for (const data of [{ zeta: '' }, { zeta: b64('') }]) {
      const r = resolvePasswordSources(
        'ns',
        passwordSecretRefs('shop', roles.slice(0, 1)),
        lookup({ pw: { metadata: { resourceVersion: '2' }, data } }),
      );
      expect(r.sources).toEqual({});
      expect(r.failures).toEqual([
        {
          role: 'zeta',
          reason: 'SecretValueEmpty',
          message: 'password of role zeta: Secret ns/pw key zeta is empty',
        },
      ]);
    }
    const plain = resolvePasswordSources(
      'ns',
      passwordSecretRefs('shop', roles.slice(0, 1)),
      lookup({ pw: { metadata: { resourceVersion: '2' }, stringData: { zeta: '' } } }),
    );
    expect(plain.failures[0]?.reason).toBe('SecretValueEmpty');
  });

  it('treats a generated Secret without its key as a failure, not as missing', () => {
    const r = resolvePasswordSources(
      'ns',
      passwordSecretRefs('shop', roles.slice(2, 3)),
      lookup({ 'my-secret': { metadata: { resourceVersion: '3' }, data: {} } }),
    );
    expect(r.missingGenerated).toEqual([]);
    expect(r.failures[0]?.reason).toBe('SecretKeyMissing');
  });
});

describe('readPasswordForSource', () => {
  const secret: SecretLike = {
    metadata: { name: 'pw', resourceVersion: '10' },
    data: { app: b64('the-password') },
  };

  it('returns the cleartext for the recorded version', () => {
    expect(
      readPasswordForSource('ns', passwordSourceVersion('pw', 'app', '10'), lookup({ pw: secret })),
    ).toEqual({ ok: true, password: 'the-password' });
  });

  it('refuses when the Secret changed since the plan', () => {
    const r = readPasswordForSource('ns', 'pw:app:9', lookup({ pw: secret }));
    expect(r).toMatchObject({ ok: false, reason: 'SecretVersionChanged' });
    expect(JSON.stringify(r)).not.toContain('the-password');
  });

  it('refuses missing Secrets, keys, the missing sentinel and malformed versions', () => {
    expect(readPasswordForSource('ns', 'pw:app:10', lookup({}))).toMatchObject({ reason: 'SecretMissing' });
    expect(readPasswordForSource('ns', 'pw:other:10', lookup({ pw: secret }))).toMatchObject({
      reason: 'SecretKeyMissing',
    });
    expect(readPasswordForSource('ns', 'pw:app:missing', lookup({ pw: secret }))).toMatchObject({
      reason: 'InvalidSourceVersion',
    });
    expect(readPasswordForSource('ns', 'pw:app', lookup({ pw: secret }))).toMatchObject({
      reason: 'InvalidSourceVersion',
    });
  });
});
