// Small helpers for tests that talk to the emulator through @kubernetes/client-node:
// unwrap an ApiException into code + Status body, and wait for an eventually-true condition.
import { ApiException } from '@kubernetes/client-node';
import type { StatusBody } from './types.js';

/** The HTTP code and Status body of a rejected client-node call. */
export type ApiFailure = { readonly code: number; readonly body: StatusBody };

/** Awaits `call`, expecting an ApiException; returns its code and parsed Status body. */
export async function apiFailure(call: Promise<unknown>): Promise<ApiFailure> {
  try {
    await call;
  } catch (error) {
    if (error instanceof ApiException) {
      const raw: unknown = error.body;
      const body = (typeof raw === 'string' ? JSON.parse(raw) : raw) as StatusBody;
      return { code: error.code, body };
    }
    throw error;
  }
  throw new Error('expected the API call to fail, but it succeeded');
}

/**
 * Polls `probe` until it returns a value other than undefined/false, or throws after `timeoutMs`
 * with `what` in the message. For waiting on asynchronous delivery, never for asserting speed.
 */
export async function eventually<T>(
  what: string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
