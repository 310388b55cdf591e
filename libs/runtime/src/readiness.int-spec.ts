// /readyz follows the service's dependencies: it turns not-ready when NATS goes away and ready again
// when it returns (a private nats-server this test stops and restarts), while /healthz stays up.
import { Module, type INestApplication } from '@nestjs/common';
import { freePort, startPrivateNatsServer, type PrivateNatsServer } from '@rolepolicy/testing';
import { serviceTopology } from '@rolepolicy/contracts';
import { baseEnvSpec } from './base-config.js';
import { startService, type ServiceDefinition } from './bootstrap.js';

@Module({})
class NoFeaturesModule {}

const executorLike: ServiceDefinition<ReturnType<typeof baseEnvSpec>> = {
  service: 'executor',
  envSpec: baseEnvSpec(0),
  module: NoFeaturesModule,
};

type Probe = {
  readonly code: number;
  readonly body: { readonly status?: string; readonly checks?: Record<string, string> };
};

async function get(url: string): Promise<Probe> {
  const res = await fetch(url);
  return { code: res.status, body: (await res.json()) as Probe['body'] };
}

async function until(url: string, code: number, what: string): Promise<Probe> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const probe = await get(url);
    if (probe.code === code) return probe;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what} (last: ${probe.code})`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('readiness follows NATS', () => {
  let nats: PrivateNatsServer;
  let app: INestApplication;
  let base: string;

  beforeAll(async () => {
    nats = await startPrivateNatsServer();
    const port = await freePort();
    app = await startService(executorLike, {
      env: {
        NATS_URL: nats.url,
        HTTP_HOST: '127.0.0.1',
        HTTP_PORT: String(port),
        LOG_LEVEL: 'error',
        READINESS_TIMEOUT_MS: '500',
      },
      // No gateway here: the test's own service creates its streams and consumers instead of binding (ADR 0022).
      topology: serviceTopology('executor'),
    });
    base = `http://127.0.0.1:${port}`;
  }, 30_000);

  afterAll(async () => {
    await app?.close();
    await nats?.dispose();
  }, 30_000);

  it('is ready while NATS answers', async () => {
    const ready = await get(`${base}/readyz`);
    expect(ready).toEqual({
      code: 200,
      body: { status: 'ready', service: 'executor', checks: { nats: 'up' } },
    });
  });

  it('turns not-ready when NATS goes away, stays alive, and is ready again when NATS returns', async () => {
    await nats.stop();
    const down = await until(`${base}/readyz`, 503, 'not-ready');
    expect(down.body).toMatchObject({ status: 'not_ready', checks: { nats: 'down' } });
    expect((await get(`${base}/healthz`)).code).toBe(200);

    await nats.start();
    const up = await until(`${base}/readyz`, 200, 'ready again');
    expect(up.body).toMatchObject({ status: 'ready', checks: { nats: 'up' } });
  }, 60_000);
});
