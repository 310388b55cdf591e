// Spec password.generate: a random password of the requested length (16..128, default 32) stored in a
// new Secret owned by the policy; the digest binds the source version, never the password.
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import {
  PASSWORD_ALPHABET,
  buildGeneratedPasswordSecret,
  passwordFromRandomBytes,
  passwordSourceVersion,
} from './password-secret.js';
import { at, policy } from './test-support/fixtures.js';

describe('generated passwords', () => {
  it('has the requested length and only unquoted-safe characters', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 16, max: 128 }),
        fc.uint8Array({ minLength: 128, maxLength: 128 }),
        (n, bytes) => {
          const pw = passwordFromRandomBytes(bytes, n);
          return pw.length === n && [...pw].every((c) => PASSWORD_ALPHABET.includes(c));
        },
      ),
    );
  });

  it('defaults to 32 characters', () => {
    expect(passwordFromRandomBytes(randomBytes(32))).toHaveLength(32);
  });

  it.each([15, 129])('refuses length %i (spec bounds 16..128)', (n) => {
    expect(() => passwordFromRandomBytes(randomBytes(200), n)).toThrow('16..128');
  });

  it('two draws differ (the password comes from the caller’s randomness)', () => {
    expect(passwordFromRandomBytes(randomBytes(32))).not.toBe(passwordFromRandomBytes(randomBytes(32)));
  });

  it('source version names the Secret, key and resourceVersion, never the password', () => {
    expect(passwordSourceVersion('orders-gen-app', 'password', '42')).toBe('orders-gen-app:password:42');
  });
});

describe('generated password Secret', () => {
  const secret = buildGeneratedPasswordSecret({
    policy: policy(),
    role: 'App_Role',
    secretName: 'orders-gen-app',
    secretKey: 'password',
    password: 'pw-abc',
    verifier: 'SCRAM-SHA-256$4096:c2FsdA==$a:b',
    now: at(0),
  });

  it('is owned by the policy so it is deleted with it', () => {
    expect(secret.metadata.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'PostgresPolicy', uid: 'uid-orders', controller: true }),
    ]);
    expect(secret.metadata).toMatchObject({ name: 'orders-gen-app', namespace: 'team-a' });
  });

  it('stores the password under its key and the verifier beside it, base64-encoded', () => {
    expect(Buffer.from(secret.data['password'] ?? '', 'base64').toString()).toBe('pw-abc');
    expect(Buffer.from(secret.data['verifier'] ?? '', 'base64').toString()).toMatch(/^SCRAM-SHA-256\$/);
  });

  it('labels are valid label values even for role names with uppercase and underscores', () => {
    for (const v of Object.values(secret.metadata.labels ?? {}))
      expect(v).toMatch(/^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/);
  });

  it('never puts the password in metadata', () => {
    expect(JSON.stringify(secret.metadata)).not.toContain('pw-abc');
  });

  it('refuses the reserved key "verifier"', () => {
    expect(() =>
      buildGeneratedPasswordSecret({
        policy: policy(),
        role: 'app',
        secretName: 's',
        secretKey: 'verifier',
        password: 'p',
        verifier: 'v',
        now: at(0),
      }),
    ).toThrow('reserved');
  });
});
