// A service's module hooks run exactly once per process: the HTTP application and the JetStream
// microservice share one container, and services start informers, leases and timers in those hooks.
import { Injectable, Module, type OnApplicationBootstrap, type OnModuleInit } from '@nestjs/common';
import { freePort, startPrivateNatsServer, type PrivateNatsServer } from '@rolepolicy/testing';
import { serviceTopology } from '@rolepolicy/contracts';
import { baseEnvSpec } from './base-config.js';
import { startService, type ServiceDefinition } from './bootstrap.js';

const calls: string[] = [];

@Injectable()
class HookCounter implements OnModuleInit, OnApplicationBootstrap {
  onModuleInit(): void {
    calls.push('init');
  }
  onApplicationBootstrap(): void {
    calls.push('bootstrap');
  }
}

@Module({ providers: [HookCounter] })
class CountingModule {}

const plannerLike: ServiceDefinition<ReturnType<typeof baseEnvSpec>> = {
  service: 'planner',
  envSpec: baseEnvSpec(0),
  module: CountingModule,
};

let nats: PrivateNatsServer;

beforeAll(async () => {
  nats = await startPrivateNatsServer();
}, 30_000);

afterAll(async () => {
  await nats?.dispose();
}, 30_000);

test('init and bootstrap hooks run once, before the service is returned', async () => {
  const app = await startService(plannerLike, {
    env: {
      NATS_URL: nats.url,
      HTTP_HOST: '127.0.0.1',
      HTTP_PORT: String(await freePort()),
      LOG_LEVEL: 'error',
    },
    // No gateway here: the test's own service creates its streams and consumers instead of binding (ADR 0022).
    topology: serviceTopology('planner'),
  });
  try {
    expect(calls).toEqual(['init', 'bootstrap']);
  } finally {
    await app.close();
  }
}, 30_000);
