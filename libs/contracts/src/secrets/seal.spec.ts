// Sealed boxes: the JWK fast path for X25519 keys keeps the wire format of the DER one it replaced. A box
// sealed by the reference (DER import/export, as first written) opens with the library and vice versa.
import {
  createCipheriv,
  createDecipheriv,
  createPublicKey,
  diffieHellman,
  generateKeyPairSync,
  hkdfSync,
  randomBytes,
  type KeyObject,
} from 'node:crypto';
import fc from 'fast-check';

import type { SealedV1 } from '../messages/secret-access.js';
import {
  exportedKeyPair,
  InvalidReplyKeyError,
  keyPairFromPrivateKey,
  open,
  replyKeyPair,
  seal,
  x25519PublicKey,
  type SealPurpose,
} from './seal.js';

const INFO: Readonly<Record<SealPurpose, string>> = {
  'secret-reply': 'rolepolicy secret reply v1',
  'inspect-connection': 'rolepolicy inspect connection v1',
};

/** The seal as first written: SPKI DER through OpenSSL's decoder and encoder. */
const reference = {
  keyPair(): { publicKey: string; privateKey: KeyObject } {
    const { publicKey, privateKey } = generateKeyPairSync('x25519');
    return { publicKey: publicKey.export({ type: 'spki', format: 'der' }).toString('base64'), privateKey };
  },
  key(secret: Buffer, salt: Buffer, purpose: SealPurpose): Buffer {
    return Buffer.from(hkdfSync('sha256', secret, salt, Buffer.from(INFO[purpose]), 32));
  },
  seal(plaintext: Uint8Array, recipient: string, purpose: SealPurpose): SealedV1 {
    const recipientKey = createPublicKey({
      key: Buffer.from(recipient, 'base64'),
      format: 'der',
      type: 'spki',
    });
    const own = generateKeyPairSync('x25519');
    const ephemeralKey = own.publicKey.export({ type: 'spki', format: 'der' });
    const key = reference.key(
      diffieHellman({ privateKey: own.privateKey, publicKey: recipientKey }),
      ephemeralKey,
      purpose,
    );
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    return {
      alg: 'x25519-hkdf-sha256-aes256gcm',
      ephemeralKey: ephemeralKey.toString('base64'),
      iv: iv.toString('base64'),
      tag: cipher.getAuthTag().toString('base64'),
      ciphertext: ciphertext.toString('base64'),
    };
  },
  open(sealed: SealedV1, privateKey: KeyObject, purpose: SealPurpose): Uint8Array {
    const ephemeralKey = Buffer.from(sealed.ephemeralKey, 'base64');
    const sender = createPublicKey({ key: ephemeralKey, format: 'der', type: 'spki' });
    const key = reference.key(diffieHellman({ privateKey, publicKey: sender }), ephemeralKey, purpose);
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(sealed.iv, 'base64'));
    decipher.setAuthTag(Buffer.from(sealed.tag, 'base64'));
    return Buffer.concat([decipher.update(Buffer.from(sealed.ciphertext, 'base64')), decipher.final()]);
  },
};

const purposes: readonly SealPurpose[] = ['secret-reply', 'inspect-connection'];

describe('seal and open', () => {
  it('a reply key is the SPKI DER OpenSSL itself would export for the same key', () => {
    for (let i = 0; i < 20; i++) {
      const keys = replyKeyPair();
      expect(keys.publicKey).toBe(
        createPublicKey(keys.privateKey).export({ type: 'spki', format: 'der' }).toString('base64'),
      );
      expect(Buffer.from(keys.publicKey, 'base64')).toHaveLength(44);
    }
  });

  it('a box sealed by the reference opens with the library, and a box sealed by the library with the reference', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.constantFrom(...purposes), (plaintext, purpose) => {
        const ours = replyKeyPair();
        expect(Buffer.from(open(reference.seal(plaintext, ours.publicKey, purpose), ours, purpose))).toEqual(
          Buffer.from(plaintext),
        );
        const theirs = reference.keyPair();
        const box = seal(plaintext, theirs.publicKey, purpose);
        expect(Buffer.from(reference.open(box, theirs.privateKey, purpose))).toEqual(Buffer.from(plaintext));
        // The ephemeral key on the wire is the DER form the reference exports.
        expect(
          createPublicKey({ key: Buffer.from(box.ephemeralKey, 'base64'), format: 'der', type: 'spki' })
            .export({ type: 'spki', format: 'der' })
            .toString('base64'),
        ).toBe(box.ephemeralKey);
      }),
      { numRuns: 50 },
    );
  });

  it('uses a fresh ephemeral key and IV for every box, even to the same recipient', () => {
    const keys = replyKeyPair();
    const boxes = Array.from({ length: 10 }, () => seal(Buffer.from('same'), keys.publicKey));
    expect(new Set(boxes.map((b) => b.ephemeralKey)).size).toBe(10);
    expect(new Set(boxes.map((b) => b.iv)).size).toBe(10);
    expect(new Set(Array.from({ length: 10 }, () => replyKeyPair().publicKey)).size).toBe(10);
  });

  it('does not open a box sealed for another purpose or to another key', () => {
    const keys = replyKeyPair();
    const box = seal(Buffer.from('secret'), keys.publicKey, 'secret-reply');
    expect(() => open(box, keys, 'inspect-connection')).toThrow();
    expect(() => open(box, replyKeyPair(), 'secret-reply')).toThrow();
  });

  it('a long-lived key pair keeps its public key and opens what the reference sealed to it', () => {
    const exported = exportedKeyPair();
    const keys = keyPairFromPrivateKey(exported.privateKey);
    expect(keys.publicKey).toBe(exported.publicKey);
    const box = reference.seal(Buffer.from('conn'), exported.publicKey, 'inspect-connection');
    expect(Buffer.from(open(box, keys, 'inspect-connection')).toString()).toBe('conn');
  });

  it('refuses keys that are not X25519 public keys with InvalidReplyKeyError and the same messages', () => {
    const ed25519 = generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'der' });
    const x448 = generateKeyPairSync('x448').publicKey.export({ type: 'spki', format: 'der' });
    expect(outcome(ed25519.toString('base64'))).toBe(
      'InvalidReplyKeyError the reply key is not an X25519 key',
    );
    expect(outcome(x448.toString('base64'))).toBe('InvalidReplyKeyError the reply key is not an X25519 key');
    const notDer = 'InvalidReplyKeyError the reply key is not a public key (SPKI DER, base64)';
    expect(outcome('')).toBe(notDer);
    expect(outcome('not base64 at all!')).toBe(notDer);
    expect(() => seal(Buffer.from('x'), ed25519.toString('base64'))).toThrow(InvalidReplyKeyError);
    expect(() => keyPairFromPrivateKey('AAAA')).toThrow(
      new InvalidReplyKeyError('the key is not a private key (PKCS#8 DER, base64)'),
    );
  });

  it('accepts and refuses exactly the keys the DER decoder did: truncated, extended and altered keys', () => {
    const valid = [...Buffer.from(replyKeyPair().publicKey, 'base64')];
    const edit = fc.oneof(
      fc.nat({ max: 44 }).map((n) => (bytes: number[]) => bytes.slice(0, n)),
      fc.uint8Array({ minLength: 1, maxLength: 3 }).map((extra) => (bytes: number[]) => [...bytes, ...extra]),
      fc.tuple(fc.nat({ max: 43 }), fc.integer({ min: 1, max: 255 })).map(
        ([at, xor]) =>
          (bytes: number[]) =>
            bytes.map((b, i) => (i === at ? b ^ xor : b)),
      ),
    );
    fc.assert(
      fc.property(fc.array(edit, { minLength: 1, maxLength: 2 }), (edits) => {
        const key = Buffer.from(edits.reduce((bytes, f) => f(bytes), valid)).toString('base64');
        expect(outcome(key)).toBe(referenceOutcome(key));
      }),
      { numRuns: 500 },
    );
  });
});

/** What x25519PublicKey makes of `key`: the raw key, or the error's name and message. */
function outcome(key: string): string {
  try {
    return `ok ${x25519PublicKey(key).export({ format: 'jwk' }).x}`;
  } catch (error) {
    return `${(error as Error).name} ${(error as Error).message}`;
  }
}

/** The same through the DER decoder, with the messages x25519PublicKey has always given. */
function referenceOutcome(key: string): string {
  let parsed: KeyObject;
  try {
    parsed = createPublicKey({ key: Buffer.from(key, 'base64'), format: 'der', type: 'spki' });
  } catch {
    return 'InvalidReplyKeyError the reply key is not a public key (SPKI DER, base64)';
  }
  if (parsed.asymmetricKeyType !== 'x25519') return 'InvalidReplyKeyError the reply key is not an X25519 key';
  return `ok ${parsed.export({ format: 'jwk' }).x}`;
}
