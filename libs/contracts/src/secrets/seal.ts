// Sealed replies for Secret reads: the requester makes a one-time X25519 key pair per request, the
// responder seals the values to its public key (ECDH with its own one-time key, HKDF-SHA-256, AES-256-GCM).
// Whoever else sees the reply (a subscriber to every inbox, a server log, a capture without TLS) sees
// ciphertext; the private key lives only in the requester's memory for the length of one request.
// Inspect requests seal their connection the same way, to the inspectors' installation key (ADR 0024).
import {
  createCipheriv,
  createDecipheriv,
  createPrivateKey,
  createPublicKey,
  diffieHellman,
  generateKeyPairSync,
  hkdfSync,
  randomBytes,
  type KeyObject,
} from 'node:crypto';
import type { SealedV1 } from '../messages/secret-access.js';

// An X25519 SubjectPublicKeyInfo in DER is always these 12 bytes (SEQUENCE, AlgorithmIdentifier with OID
// 1.3.101.110 and no parameters, BIT STRING of 33 bytes) followed by the 32-byte key (RFC 8410). OpenSSL 3's
// generic DER decoder and encoder cost ~0.2 ms per key, a tenth of a JWK import or export, so keys in this
// form travel through JWK; anything else still goes through the DER decoder (and its errors).
const X25519_SPKI_PREFIX = Buffer.from('302a300506032b656e032100', 'hex');
const X25519_SPKI_BYTES = X25519_SPKI_PREFIX.length + 32;

/** `key`'s SPKI DER encoding, composed from its raw bytes (byte-identical to export({type:'spki'})). */
function spkiDer(key: KeyObject): Buffer {
  const { x } = key.export({ format: 'jwk' });
  const raw = Buffer.from(x ?? '', 'base64url');
  if (raw.length !== 32) return key.export({ type: 'spki', format: 'der' });
  return Buffer.concat([X25519_SPKI_PREFIX, raw], X25519_SPKI_BYTES);
}

/** The public key in SPKI DER bytes; throws as createPublicKey does when they are not one. */
function importSpki(der: Buffer): KeyObject {
  if (
    der.length === X25519_SPKI_BYTES &&
    der.subarray(0, X25519_SPKI_PREFIX.length).equals(X25519_SPKI_PREFIX)
  ) {
    const x = der.subarray(X25519_SPKI_PREFIX.length).toString('base64url');
    return createPublicKey({ key: { kty: 'OKP', crv: 'X25519', x }, format: 'jwk' });
  }
  return createPublicKey({ key: der, format: 'der', type: 'spki' });
}

const ALG = 'x25519-hkdf-sha256-aes256gcm' as const;
/**
 * What a box holds. Each purpose derives its own content key, so a box sealed for one (a Secret read reply)
 * never opens as another (an inspect request's connection).
 */
export type SealPurpose = 'secret-reply' | 'inspect-connection';
const INFO: Readonly<Record<SealPurpose, Buffer>> = {
  'secret-reply': Buffer.from('rolepolicy secret reply v1'),
  'inspect-connection': Buffer.from('rolepolicy inspect connection v1'),
};

/** A one-time key pair; send `publicKey` (base64 SPKI DER) with the request, keep `privateKey`. */
export interface ReplyKeyPair {
  readonly publicKey: string;
  readonly privateKey: KeyObject;
}

/** Makes the requester's one-time key pair. */
export function replyKeyPair(): ReplyKeyPair {
  const { publicKey, privateKey } = generateKeyPairSync('x25519');
  return { publicKey: spkiDer(publicKey).toString('base64'), privateKey };
}

function contentKey(secret: Buffer, salt: Buffer, purpose: SealPurpose): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, salt, INFO[purpose], 32));
}

/** The requester's key is not an X25519 public key. */
export class InvalidReplyKeyError extends Error {
  override readonly name = 'InvalidReplyKeyError';
}

/** The X25519 public key in `recipient` (base64 SPKI DER); throws InvalidReplyKeyError otherwise. */
export function x25519PublicKey(recipient: string): KeyObject {
  let recipientKey: KeyObject;
  try {
    recipientKey = importSpki(Buffer.from(recipient, 'base64'));
  } catch {
    throw new InvalidReplyKeyError('the reply key is not a public key (SPKI DER, base64)');
  }
  if (recipientKey.asymmetricKeyType !== 'x25519')
    throw new InvalidReplyKeyError('the reply key is not an X25519 key');
  return recipientKey;
}

/**
 * A long-lived key pair from its private half (base64 PKCS#8 DER), such as the inspectors'
 * `INSPECT_SEAL_PRIVATE_KEY`; throws InvalidReplyKeyError when it is not an X25519 private key.
 */
export function keyPairFromPrivateKey(privateKey: string): ReplyKeyPair {
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: Buffer.from(privateKey, 'base64'), format: 'der', type: 'pkcs8' });
  } catch {
    throw new InvalidReplyKeyError('the key is not a private key (PKCS#8 DER, base64)');
  }
  if (key.asymmetricKeyType !== 'x25519') throw new InvalidReplyKeyError('the key is not an X25519 key');
  const publicKey = spkiDer(createPublicKey(key)).toString('base64');
  return { publicKey, privateKey: key };
}

/** A new X25519 key pair as text (public: base64 SPKI DER, private: base64 PKCS#8 DER), for configuration. */
export function exportedKeyPair(): { readonly publicKey: string; readonly privateKey: string } {
  const { publicKey, privateKey } = generateKeyPairSync('x25519');
  return {
    publicKey: publicKey.export({ type: 'spki', format: 'der' }).toString('base64'),
    privateKey: privateKey.export({ type: 'pkcs8', format: 'der' }).toString('base64'),
  };
}

/** Seals `plaintext` to `recipient` (a {@link ReplyKeyPair.publicKey}); throws InvalidReplyKeyError on a bad key. */
export function seal(
  plaintext: Uint8Array,
  recipient: string,
  purpose: SealPurpose = 'secret-reply',
): SealedV1 {
  const recipientKey = x25519PublicKey(recipient);
  const own = generateKeyPairSync('x25519');
  const ephemeralKey = spkiDer(own.publicKey);
  const key = contentKey(
    diffieHellman({ privateKey: own.privateKey, publicKey: recipientKey }),
    ephemeralKey,
    purpose,
  );
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return {
    alg: ALG,
    ephemeralKey: ephemeralKey.toString('base64'),
    iv: iv.toString('base64'),
    tag: cipher.getAuthTag().toString('base64'),
    ciphertext: ciphertext.toString('base64'),
  };
}

/** Opens a box sealed to `keys`; throws when it was tampered with or sealed to another key. */
export function open(
  sealed: SealedV1,
  keys: ReplyKeyPair,
  purpose: SealPurpose = 'secret-reply',
): Uint8Array {
  const ephemeralKey = Buffer.from(sealed.ephemeralKey, 'base64');
  const sender = importSpki(ephemeralKey);
  const key = contentKey(
    diffieHellman({ privateKey: keys.privateKey, publicKey: sender }),
    ephemeralKey,
    purpose,
  );
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(sealed.iv, 'base64'));
  decipher.setAuthTag(Buffer.from(sealed.tag, 'base64'));
  return Buffer.concat([decipher.update(Buffer.from(sealed.ciphertext, 'base64')), decipher.final()]);
}
