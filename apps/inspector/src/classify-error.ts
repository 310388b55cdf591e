// Sorts an inspection failure into transient (worth retrying: the target is unreachable, overloaded or
// restarting) or permanent (credentials, missing database, scope errors), with a redacted message.
import { redactText, type Secret } from '@rolepolicy/catalog';
import type { ErrorClass } from '@rolepolicy/contracts';

/** What the reply's `error` field carries. */
export type ClassifiedError = {
  readonly class: ErrorClass;
  readonly code: string | null;
  readonly message: string;
};

/** Node socket errors that mean "could not reach the server (yet)". */
const TRANSIENT_NODE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'EPIPE',
]);

/** Timeouts the server reports: statement_timeout (57014) and lock_timeout (55P03). */
const TRANSIENT_SQLSTATES = new Set(['57014', '55P03']);

/** True for codes worth retrying: Node socket errors, SQLSTATE class 08, 53 and 57P0x, and timeouts. */
export function isTransientCode(code: string | null): boolean {
  if (code === null) return false;
  return (
    TRANSIENT_NODE_CODES.has(code) ||
    TRANSIENT_SQLSTATES.has(code) ||
    code.startsWith('08') ||
    code.startsWith('53') ||
    /^57P0\d$/.test(code)
  );
}

function codeOf(error: unknown): string | null {
  return typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string'
    ? error.code
    : null;
}

/**
 * Classifies `error` and redacts its message of `secrets` (credentials and Secret-sourced connection parts,
 * ADR 0018; any URL userinfo too) before it is cut to length. Connection timeouts
 * raised by node-postgres carry no code, so a code-less "timeout" message counts as transient.
 */
export function classifyError(error: unknown, secrets: readonly Secret[]): ClassifiedError {
  const code = codeOf(error);
  const raw = error instanceof Error ? error.message : String(error);
  const message = redactText(raw.length > 0 ? raw : 'inspection failed', secrets).slice(0, 4096);
  const timeout = code === null && /timeout|timed out/i.test(raw);
  return { class: isTransientCode(code) || timeout ? 'transient' : 'permanent', code, message };
}
