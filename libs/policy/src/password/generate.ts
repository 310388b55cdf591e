// Generated passwords as data: the random password (from bytes the caller draws) and the Secret data that
// holds it beside its SCRAM verifier. Pure; the k8s-gateway draws the bytes where it writes the Secret.

/** 64 symbols: each random byte's low 6 bits pick one without bias, and the result needs no quoting. */
export const PASSWORD_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
/** Spec bounds of `password.generate.length`. */
export const PASSWORD_LENGTH = { min: 16, max: 128, default: 32 } as const;
/** Key of the SCRAM verifier stored beside a generated password, so every replica renders the same SQL. */
export const VERIFIER_KEY = 'verifier';

/**
 * A password of `length` characters (6 bits each) from random bytes; pass at least `length` bytes
 * (e.g. `crypto.randomBytes(length)`).
 * @example passwordFromRandomBytes(randomBytes(32)).length // 32
 */
export function passwordFromRandomBytes(bytes: Uint8Array, length: number = PASSWORD_LENGTH.default): string {
  if (!Number.isInteger(length) || length < PASSWORD_LENGTH.min || length > PASSWORD_LENGTH.max) {
    throw new Error(`generated password length must be ${PASSWORD_LENGTH.min}..${PASSWORD_LENGTH.max}`);
  }
  if (bytes.length < length) throw new Error(`need ${length} random bytes, got ${bytes.length}`);
  let out = '';
  for (let i = 0; i < length; i += 1) out += PASSWORD_ALPHABET[(bytes[i] ?? 0) & 63];
  return out;
}

/**
 * The `data` of a generated password Secret (base64, as the API stores it): the password under
 * `secretKey` and its verifier under {@link VERIFIER_KEY}.
 */
export function generatedSecretData(
  secretKey: string,
  password: string,
  verifier: string,
): Readonly<Record<string, string>> {
  if (secretKey === VERIFIER_KEY) throw new Error(`secretKey "${VERIFIER_KEY}" is reserved`);
  const b64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64');
  return { [secretKey]: b64(password), [VERIFIER_KEY]: b64(verifier) };
}
