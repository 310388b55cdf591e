// One delivery against a stand-in fetch and Secret reader: the signed CloudEvent it sends, which answers retry
// and which dead-letter, and errors that name Secrets and keys but never the URL or a key.
import { requestOccurrences, verifySignature, type RequestLike } from '@rolepolicy/policy';
import { PermanentDeliveryError, type DeliveryJob } from '../scheduler/queues.js';
import { deliver, SinkNotReadyError, type DeliveryDeps } from './delivery.js';
import type { PublishedConfigMap } from './sinks.js';

const URL_VALUE = 'https://hooks.example.com/T000/secret-path';
const KEY = 'signing-key-value';
const b64 = (s: string) => Buffer.from(s).toString('base64');

const request: RequestLike = {
  metadata: { name: 'r', namespace: 'team-a', uid: 'u1' },
  spec: {
    accessPolicyRef: { name: 'p' },
    subject: { role: 'alice' },
    requestedBy: { username: 'alice@example.com' },
  },
  status: { phase: 'Active', activatedAt: '2026-11-27T10:00:00Z' },
};
const job: DeliveryJob = {
  sinkNamespace: 'team-a',
  occurrence: requestOccurrences(request, '2026-11-27T10:00:01Z')[0]!,
  queuedAt: 0,
};

function deps(
  answer: number | Error,
  options: { settings?: Record<string, string>; data?: Record<string, string> } = {},
) {
  const sent: { url: string; init: RequestInit }[] = [];
  const configMap: PublishedConfigMap = {
    metadata: { namespace: 'team-a' },
    settings: options.settings ?? { urlSecretName: 'hook', signingSecretName: 'hook', signingKeys: 'k2,k1' },
  };
  const d: DeliveryDeps = {
    configMap: () => configMap,
    secrets: {
      read: async () => ({
        secrets: new Map([['hook', { data: options.data ?? { url: b64(URL_VALUE), k1: b64(KEY) } }]]),
      }),
    },
    timeoutMs: 1_000,
    fetch: (async (url: URL, init: RequestInit) => {
      sent.push({ url: String(url), init });
      if (answer instanceof Error) throw answer;
      return new Response(null, { status: answer });
    }) as unknown as typeof fetch,
  };
  return { d, sent };
}

async function failure(promise: Promise<void>): Promise<Error> {
  return promise.then(
    () => {
      throw new Error('delivered');
    },
    (e: Error) => e,
  );
}

describe('one notification delivery', () => {
  it('POSTs the CloudEvent to the Secret URL, signed with each key present', async () => {
    const { d, sent } = deps(202);
    await deliver(job, d);
    expect(sent).toHaveLength(1);
    expect(sent[0]?.url).toBe(URL_VALUE);
    const headers = sent[0]?.init.headers as Record<string, string>;
    expect(headers['content-type']).toMatch(/^application\/cloudevents\+json/);
    const signature = headers['x-rolepolicy-signature']!;
    expect(signature.split(',')).toHaveLength(1); // k2 is listed but not in the Secret yet
    expect(verifySignature(String(sent[0]?.init.body), signature, Buffer.from(KEY))).toBe(true);
    expect(JSON.parse(String(sent[0]?.init.body))).toMatchObject({ id: job.occurrence.id });
  });

  it('retries 5xx, 408, 429 and transport errors; dead-letters other 4xx at once', async () => {
    for (const status of [500, 503, 408, 429]) {
      const error = await failure(deliver(job, deps(status).d));
      expect(error).not.toBeInstanceOf(PermanentDeliveryError);
      expect(error.message).toContain(`HTTP ${status}`);
    }
    for (const status of [400, 404, 410]) {
      expect(await failure(deliver(job, deps(status).d))).toBeInstanceOf(PermanentDeliveryError);
    }
    const refused = Object.assign(new TypeError(`fetch failed ${URL_VALUE}`), {
      cause: { code: 'ECONNREFUSED', message: `connect ECONNREFUSED ${URL_VALUE}` },
    });
    const transport = await failure(deliver(job, deps(refused).d));
    expect(transport.message).toBe(
      'notification sink team-a/rolepolicy-notifications: POST connection failed (ECONNREFUSED)',
    );
  });

  it('a missing Secret key is retried and named; a non-http URL is refused; no value in any message', async () => {
    const missing = await failure(deliver(job, deps(200, { data: { k1: b64(KEY) } }).d));
    expect(missing).toBeInstanceOf(SinkNotReadyError);
    expect(missing.message).toBe('Secret team-a/hook has no value at key url (notification sink)');
    const unsigned = await failure(deliver(job, deps(200, { data: { url: b64(URL_VALUE) } }).d));
    expect(unsigned.message).toContain('has none of the keys k2, k1');
    const ftp = await failure(
      deliver(job, deps(200, { data: { url: b64('ftp://x/secret-path'), k1: b64(KEY) } }).d),
    );
    expect(ftp).toBeInstanceOf(PermanentDeliveryError);
    for (const e of [missing, unsigned, ftp]) {
      expect(e.message).not.toContain('secret-path');
      expect(e.message).not.toContain(KEY);
    }
  });

  it('a Slack sink gets text and blocks, unsigned when it names no signing Secret', async () => {
    const { d, sent } = deps(200, { settings: { format: 'slack', urlSecretName: 'hook' } });
    await deliver(job, d);
    const headers = sent[0]?.init.headers as Record<string, string>;
    expect(headers['x-rolepolicy-signature']).toBeUndefined();
    expect(JSON.parse(String(sent[0]?.init.body))).toHaveProperty('blocks');
  });
});
