// The hot paths as they were before the sixth session (canonical JSON with a path per value, sealed boxes
// through OpenSSL's DER decoder and encoder, all-errors schema checks), kept only as the floor the
// benchmarks print beside today's.
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

import type { TSchema } from '@sinclair/typebox';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';

import type { SealedV1 } from '@rolepolicy/contracts';
import { compareCodePoints } from '@rolepolicy/policy';

function legacyEncode(value: unknown, path: string): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'boolean':
      return value ? 'true' : 'false';
    case 'string':
      return JSON.stringify(value);
    case 'bigint':
      return JSON.stringify(value.toString());
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError(`canonicalJson: ${path} is not a finite number`);
      if (Number.isInteger(value) && !Number.isSafeInteger(value)) {
        throw new TypeError(`canonicalJson: ${path} is an integer beyond 2^53; pass int64 values as strings`);
      }
      return JSON.stringify(value);
    case 'object': {
      if (Array.isArray(value)) {
        return `[${value.map((item, i) => (item === undefined ? 'null' : legacyEncode(item, `${path}[${i}]`))).join(',')}]`;
      }
      const proto: unknown = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) {
        throw new TypeError(`canonicalJson: ${path} is not a plain object`);
      }
      const record = value as Readonly<Record<string, unknown>>;
      const members = Object.keys(record)
        .filter((key) => record[key] !== undefined)
        .sort(compareCodePoints)
        .map((key) => `${JSON.stringify(key)}:${legacyEncode(record[key], `${path}.${key}`)}`);
      return `{${members.join(',')}}`;
    }
    default:
      throw new TypeError(`canonicalJson: ${path} has unsupported type ${typeof value}`);
  }
}

/** canonicalJson before the sixth session. */
export function legacyCanonicalJson(value: unknown): string {
  return legacyEncode(value, '$');
}

const INFO = Buffer.from('rolepolicy secret reply v1');

/** replyKeyPair before the sixth session (SPKI DER export through OpenSSL). */
export function legacyReplyKeyPair(): { publicKey: string; privateKey: KeyObject } {
  const { publicKey, privateKey } = generateKeyPairSync('x25519');
  return { publicKey: publicKey.export({ type: 'spki', format: 'der' }).toString('base64'), privateKey };
}

/** seal before the sixth session (SPKI DER import and export through OpenSSL). */
export function legacySeal(plaintext: Uint8Array, recipient: string): SealedV1 {
  const recipientKey = createPublicKey({
    key: Buffer.from(recipient, 'base64'),
    format: 'der',
    type: 'spki',
  });
  const own = generateKeyPairSync('x25519');
  const ephemeralKey = own.publicKey.export({ type: 'spki', format: 'der' });
  const secret = diffieHellman({ privateKey: own.privateKey, publicKey: recipientKey });
  const key = Buffer.from(hkdfSync('sha256', secret, ephemeralKey, INFO, 32));
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
}

/** open before the sixth session. */
export function legacyOpen(sealed: SealedV1, privateKey: KeyObject): Uint8Array {
  const ephemeralKey = Buffer.from(sealed.ephemeralKey, 'base64');
  const sender = createPublicKey({ key: ephemeralKey, format: 'der', type: 'spki' });
  const secret = diffieHellman({ privateKey, publicKey: sender });
  const key = Buffer.from(hkdfSync('sha256', secret, ephemeralKey, INFO, 32));
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(sealed.iv, 'base64'));
  decipher.setAuthTag(Buffer.from(sealed.tag, 'base64'));
  return Buffer.concat([decipher.update(Buffer.from(sealed.ciphertext, 'base64')), decipher.final()]);
}

type AddFormats = (ajv: Ajv) => Ajv;
const addFormats: AddFormats =
  (addFormatsModule as unknown as { default?: AddFormats }).default ??
  (addFormatsModule as unknown as AddFormats);
const allErrorsAjv = addFormats(new Ajv({ allErrors: true, strict: true, verbose: false }));

/** A contract's schema check before the sixth session: one all-errors validator decides and explains. */
export function legacySchemaCheck(schema: TSchema): (value: unknown) => boolean {
  const validate = allErrorsAjv.compile(schema);
  return (value) => validate(value);
}
