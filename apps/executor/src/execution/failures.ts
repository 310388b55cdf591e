// Sorts a failure outside SQL execution: transient ones (target unreachable, timeouts, lock waits) are
// retried by redelivery; permanent ones, and transient ones on the last delivery, become a Failed result.
import { CloudIdentityError, DatabaseError, ExecutionError, SafeError } from '@rolepolicy/catalog';
import type { ErrorClass } from '@rolepolicy/contracts';
import {
  InvalidConnectionError,
  PlanNotVisibleError,
  SecretReadUnavailableError,
  SecretUnavailableError,
} from './secrets.js';

/** How the executor reacts to a failure that happened before or around the SQL. */
export type ClassifiedFailure = {
  readonly class: ErrorClass;
  readonly reason:
    'SecretUnavailable' | 'InvalidConnection' | 'DatabaseUnavailable' | 'DatabaseError' | 'PreparationFailed';
  /** Safe to publish: built from redacted errors only. */
  readonly message: string;
};

const TRANSIENT_NODE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'EPIPE',
]);

/** Connection classes 08/53/57P0x, timeouts (57014, 55P03 lock wait) and serialization/deadlock (40001, 40P01). */
export function transientCode(code: string | null): boolean {
  if (code === null) return false;
  return (
    TRANSIENT_NODE_CODES.has(code) ||
    ['57014', '55P03', '40001', '40P01'].includes(code) ||
    code.startsWith('08') ||
    code.startsWith('53') ||
    /^57P0\d$/.test(code)
  );
}

/**
 * Classifies an error thrown while resolving, locking, inspecting or planning. Only {@link SafeError}s
 * (already redacted) lend their message; anything else is described by its type alone.
 */
export function classifyFailure(error: unknown): ClassifiedFailure {
  if (error instanceof SecretUnavailableError) {
    return { class: 'permanent', reason: 'SecretUnavailable', message: error.message };
  }
  if (error instanceof SecretReadUnavailableError) {
    // No answer (gateway or API busy or down), not a refusal: asked again on the next delivery.
    return { class: 'transient', reason: 'SecretUnavailable', message: error.message };
  }
  if (error instanceof PlanNotVisibleError) {
    return { class: 'transient', reason: 'PreparationFailed', message: error.message };
  }
  if (error instanceof InvalidConnectionError) {
    return { class: 'permanent', reason: 'InvalidConnection', message: error.message };
  }
  if (error instanceof CloudIdentityError) {
    // The provider's token endpoint is down or refused: retried like an unreachable database.
    return { class: 'transient', reason: 'DatabaseUnavailable', message: error.message };
  }
  if (error instanceof DatabaseError) {
    const timeout = error.code === null && /timeout|timed out/i.test(error.message);
    const message = error.code === null ? error.message : `${error.message} (${error.code})`;
    return transientCode(error.code) || timeout
      ? { class: 'transient', reason: 'DatabaseUnavailable', message }
      : { class: 'permanent', reason: 'DatabaseError', message };
  }
  if (error instanceof ExecutionError && error.concurrentUpdate) {
    // Rolled back after colliding with another session (e.g. the same role granted from another database of
    // the server): redelivered, and the next attempt looks again under the lock.
    return { class: 'transient', reason: 'DatabaseError', message: error.message };
  }
  if (error instanceof SafeError)
    return { class: 'permanent', reason: 'PreparationFailed', message: error.message };
  const kind = error instanceof Error ? error.name : typeof error;
  return {
    class: 'transient',
    reason: 'PreparationFailed',
    message: `unexpected ${kind} while preparing the execution`,
  };
}
