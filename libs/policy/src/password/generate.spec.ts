// Spec password.generate: a random password of the requested length (16..128, default 32); the Secret
// data holds it beside its SCRAM verifier.
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { PASSWORD_ALPHABET, generatedSecretData, passwordFromRandomBytes } from './generate.js';

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
});

describe('generated password Secret data', () => {
  it('stores the password under its key and the verifier beside it, base64-encoded', () => {
    const data = generatedSecretData('password', 'pw-abc', 'SCRAM-SHA-256$4096:c2FsdA==$a:b');
    expect(Buffer.from(data['password'] ?? '', 'base64').toString()).toBe('pw-abc');
    expect(Buffer.from(data['verifier'] ?? '', 'base64').toString()).toMatch(/^SCRAM-SHA-256\$/);
  });

  it('refuses the reserved key "verifier"', () => {
    expect(() => generatedSecretData('verifier', 'p', 'v')).toThrow('reserved');
  });
});
