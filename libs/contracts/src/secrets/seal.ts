// Sealed replies for Secret reads: the requester makes a one-time X25519 key pair per request, the
// responder seals the values to its public key (ECDH with its own one-time key, HKDF-SHA-256, AES-256-GCM).
// Whoever else sees the reply (a subscriber to every inbox, a server log, a capture without TLS) sees
// ciphertext; the private key lives only in the requester's memory for the length of one request.
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
import type { SealedV1 } from '../messages/secret-access.js';

const ALG = 'x25519-hkdf-sha256-aes256gcm' as const;
const INFO = Buffer.from('rolepolicy secret reply v1');

/** A one-time key pair; send `publicKey` (base64 SPKI DER) with the request, keep `privateKey`. */
export interface ReplyKeyPair {
  readonly publicKey: string;
  readonly privateKey: KeyObject;
}

/** Makes the requester's one-time key pair. */
export function replyKeyPair(): ReplyKeyPair {
  const { publicKey, privateKey } = generateKeyPairSync('x25519');
  return { publicKey: publicKey.export({ type: 'spki', format: 'der' }).toString('base64'), privateKey };
}

function contentKey(secret: Buffer, salt: Buffer): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, salt, INFO, 32));
}

/** The requester's key is not an X25519 public key. */
export class InvalidReplyKeyError extends Error {
  override readonly name = 'InvalidReplyKeyError';
}

/** Seals `plaintext` to `recipient` (a {@link ReplyKeyPair.publicKey}); throws InvalidReplyKeyError on a bad key. */
export function seal(plaintext: Uint8Array, recipient: string): SealedV1 {
  let recipientKey: KeyObject;
  try {
    recipientKey = createPublicKey({ key: Buffer.from(recipient, 'base64'), format: 'der', type: 'spki' });
  } catch {
    throw new InvalidReplyKeyError('the reply key is not a public key (SPKI DER, base64)');
  }
  if (recipientKey.asymmetricKeyType !== 'x25519')
    throw new InvalidReplyKeyError('the reply key is not an X25519 key');
  const own = generateKeyPairSync('x25519');
  const ephemeralKey = own.publicKey.export({ type: 'spki', format: 'der' });
  const key = contentKey(
    diffieHellman({ privateKey: own.privateKey, publicKey: recipientKey }),
    ephemeralKey,
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
export function open(sealed: SealedV1, keys: ReplyKeyPair): Uint8Array {
  const ephemeralKey = Buffer.from(sealed.ephemeralKey, 'base64');
  const sender = createPublicKey({ key: ephemeralKey, format: 'der', type: 'spki' });
  const key = contentKey(diffieHellman({ privateKey: keys.privateKey, publicKey: sender }), ephemeralKey);
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(sealed.iv, 'base64'));
  decipher.setAuthTag(Buffer.from(sealed.tag, 'base64'));
  return Buffer.concat([decipher.update(Buffer.from(sealed.ciphertext, 'base64')), decipher.final()]);
}
