// Spec password.generate: the random password is stored in a new Secret owned by the policy; the digest
// binds the source version, never the password.
import { buildGeneratedSecretTemplate, passwordSourceVersion } from './password-secret.js';
import { at, policy } from './test-support/fixtures.js';

describe('password source version', () => {
  it('names the Secret, key and resourceVersion, never the password', () => {
    expect(passwordSourceVersion('orders-gen-app', 'password', '42')).toBe('orders-gen-app:password:42');
  });
});

describe('generated password Secret', () => {
  const secret = buildGeneratedSecretTemplate({
    policy: policy(),
    role: 'App_Role',
    secretName: 'orders-gen-app',
    secretKey: 'password',
    now: at(0),
  });

  it('is owned by the policy so it is deleted with it', () => {
    expect(secret.metadata.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'PostgresPolicy', uid: 'uid-orders', controller: true }),
    ]);
    expect(secret.metadata).toMatchObject({ name: 'orders-gen-app', namespace: 'team-a' });
  });

  it('carries no data: the gateway draws the password where it writes the Secret', () => {
    expect(Object.keys(secret)).not.toContain('data');
    expect(Object.keys(secret)).not.toContain('stringData');
  });

  it('labels are valid label values even for role names with uppercase and underscores', () => {
    for (const v of Object.values(secret.metadata.labels ?? {}))
      expect(v).toMatch(/^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/);
  });

  it('refuses the reserved key "verifier"', () => {
    expect(() =>
      buildGeneratedSecretTemplate({
        policy: policy(),
        role: 'app',
        secretName: 's',
        secretKey: 'verifier',
        now: at(0),
      }),
    ).toThrow('reserved');
  });
});
