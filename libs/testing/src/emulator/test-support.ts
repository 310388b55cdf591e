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

/** Status code, body and headers of one raw request (see {@link rawRequest}). */
export type RawResponse = {
  readonly code: number;
  readonly body: Record<string, unknown>;
  readonly headers: Record<string, string | string[] | undefined>;
};

/**
 * One JSON request to the emulator as `token` (none: anonymous), trusting its certificate when it
 * serves HTTPS (authentication on), e.g. to assert a Status body or send Impersonate-* headers.
 */
export async function rawRequest(
  emu: { readonly url: string; readonly caPem: string | undefined },
  request: {
    readonly method?: string;
    readonly path: string;
    readonly token?: string;
    readonly body?: unknown;
    readonly headers?: Record<string, string | string[]>;
    readonly contentType?: string;
  },
): Promise<RawResponse> {
  const { request: send } = await import(emu.url.startsWith('https') ? 'node:https' : 'node:http');
  const payload = request.body === undefined ? undefined : JSON.stringify(request.body);
  return new Promise((resolve, reject) => {
    const req = send(
      new URL(request.path, emu.url),
      {
        method: request.method ?? 'GET',
        ...(emu.caPem ? { ca: emu.caPem } : {}),
        headers: {
          Accept: 'application/json',
          ...(payload ? { 'Content-Type': request.contentType ?? 'application/json' } : {}),
          ...(request.token ? { Authorization: `Bearer ${request.token}` } : {}),
          ...request.headers,
        },
      },
      (res: import('node:http').IncomingMessage) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({
            code: res.statusCode ?? 0,
            body: (text.startsWith('{') ? JSON.parse(text) : { text }) as Record<string, unknown>,
            headers: res.headers,
          });
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}
