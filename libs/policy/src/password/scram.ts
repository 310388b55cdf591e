// SCRAM-SHA-256 verifiers (RFC 5802/7677, as PostgreSQL stores them): cleartext never enters SQL.
// Pure: the salt is passed in, so the same inputs always give the same verifier; buffers are zeroed after use.

import { createHash, createHmac, pbkdf2Sync } from 'node:crypto';
import saslprep from '@mongodb-js/saslprep';

/** PostgreSQL's default `scram_iterations`. */
export const SCRAM_DEFAULT_ITERATIONS = 4096;

/** Salt length PostgreSQL generates (bytes); the caller supplies fresh random bytes of this size. */
export const SCRAM_SALT_LENGTH = 16;

/**
 * Computes `SCRAM-SHA-256$<iterations>:<b64 salt>$<b64 StoredKey>:<b64 ServerKey>`, the text PostgreSQL keeps in
 * `pg_authid.rolpassword`; `ALTER ROLE ... PASSWORD '<verifier>'` stores it verbatim. The password is prepared
 * with SASLprep first, exactly as the server and libpq do (see `preparePassword`).
 *
 * @example scramSha256Verifier('secret', Buffer.alloc(16, 1)).startsWith('SCRAM-SHA-256$4096:')
 */
export function scramSha256Verifier(
  password: string,
  salt: Buffer,
  iterations: number = SCRAM_DEFAULT_ITERATIONS,
): string {
  if (!Number.isInteger(iterations) || iterations < 1) {
    throw new RangeError('SCRAM iterations must be a positive integer');
  }
  if (salt.length === 0) throw new RangeError('SCRAM salt must not be empty');
  const passwordBytes = Buffer.from(preparePassword(password), 'utf8');
  const saltedPassword = pbkdf2Sync(passwordBytes, salt, iterations, 32, 'sha256');
  const clientKey = createHmac('sha256', saltedPassword).update('Client Key').digest();
  const storedKey = createHash('sha256').update(clientKey).digest();
  const serverKey = createHmac('sha256', saltedPassword).update('Server Key').digest();
  try {
    return `SCRAM-SHA-256$${iterations}:${salt.toString('base64')}$${storedKey.toString('base64')}:${serverKey.toString('base64')}`;
  } finally {
    // Derived keys let anyone authenticate as the role; do not leave them in freed heap memory.
    passwordBytes.fill(0);
    saltedPassword.fill(0);
    clientKey.fill(0);
    storedKey.fill(0);
    serverKey.fill(0);
  }
}

/**
 * SASLprep (RFC 4013, stored-strings profile) as PostgreSQL applies it to SCRAM passwords: non-ASCII spaces
 * become spaces, "mapped to nothing" characters vanish, NFKC; when the result would contain prohibited or
 * unassigned (Unicode 3.2) characters or fail the bidi rule, the server uses the raw password instead.
 * libpq does the same on the client side, so a verifier computed any other way would reject the login.
 */
export function preparePassword(password: string): string {
  try {
    const prepared = saslprep(password);
    // An input that maps to nothing cannot be a password: the server keeps the raw text then.
    return prepared.length === 0 ? password : prepared;
  } catch {
    return password;
  }
}

/** The parts of a verifier, as read back from `pg_authid`. Null when `text` is not a SCRAM-SHA-256 verifier. */
export function parseScramVerifier(text: string): {
  readonly iterations: number;
  readonly salt: Buffer;
  readonly storedKey: string;
  readonly serverKey: string;
} | null {
  const match = /^SCRAM-SHA-256\$([0-9]+):([A-Za-z0-9+/=]+)\$([A-Za-z0-9+/=]+):([A-Za-z0-9+/=]+)$/.exec(text);
  if (match === null) return null;
  return {
    iterations: Number(match[1]),
    salt: Buffer.from(match[2]!, 'base64'),
    storedKey: match[3]!,
    serverKey: match[4]!,
  };
}
