// Keeps credentials out of errors and logs: every error leaving libs/catalog is rebuilt from a redacted
// message and its SQLSTATE only (never the original object, whose fields may carry the URL or password).
import { redactValues, type SecretRedaction } from '@rolepolicy/policy';

/** The placeholder that replaces any secret. */
export const REDACTED = '[REDACTED]';

const URL_USERINFO = /(postgres(?:ql)?:\/\/[^:/@\s]*):[^@\s]*@/gi;

/**
 * A value an error must never show: a credential (a string: password, URL, token; it becomes `[REDACTED]`)
 * or a Secret-sourced connection part with the label naming its Secret and key (ADR 0018).
 */
export type Secret = string | SecretRedaction;

/**
 * Replaces every secret (in every form a message can carry it, any letter case) and any
 * `postgres://user:password@` userinfo in `text`, in one pass.
 */
export function redactText(text: string, secrets: readonly Secret[]): string {
  const redactions = secrets.map((secret) =>
    typeof secret === 'string' ? { value: secret, label: REDACTED } : secret,
  );
  return redactValues(text.replace(URL_USERINFO, `$1:${REDACTED}@`), redactions);
}

/** Base of the errors libs/catalog builds itself from redacted text: safe to log as they are. */
export class SafeError extends Error {}

/** A database error with a redacted message and the SQLSTATE, safe to log or put in a status. */
export class DatabaseError extends SafeError {
  override readonly name = 'DatabaseError';
  constructor(
    message: string,
    /** SQLSTATE when the server reported one, else a Node error code (ECONNREFUSED) or null. */
    readonly code: string | null,
  ) {
    super(message);
  }
}

/** The SQLSTATE (or Node error code) of an error, if any. */
export function errorCode(error: unknown): string | null {
  return typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string'
    ? error.code
    : null;
}

/** Rebuilds `error` as a DatabaseError whose message has every secret removed; drops stack and cause. */
export function redactError(error: unknown, secrets: readonly Secret[]): DatabaseError {
  if (error instanceof DatabaseError)
    return new DatabaseError(redactText(error.message, secrets), error.code);
  if (error instanceof SafeError) return new DatabaseError(redactText(error.message, secrets), null);
  const raw = error instanceof Error ? error.message : String(error);
  const message = raw.length > 0 ? raw : error instanceof Error ? error.name : 'database error';
  return new DatabaseError(redactText(message, secrets), errorCode(error));
}
