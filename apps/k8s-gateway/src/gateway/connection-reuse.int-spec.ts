// The gateway's API client reuses its connections: client-node alone opens one per request.
import { fileURLToPath } from 'node:url';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { startEmulator, startTcpProxy, type Emulator, type TcpProxy } from '@rolepolicy/testing';
import { withConnectionReuse } from './connection-reuse.js';

const crdDir = fileURLToPath(new URL('../../../../deploy/crds', import.meta.url));

let emu: Emulator;
let proxy: TcpProxy;

beforeAll(async () => {
  emu = await startEmulator({ crdDir });
  proxy = await startTcpProxy(Number(new URL(emu.url).port));
});

afterAll(async () => {
  await proxy.dispose();
  await emu.stop();
});

/** A KubeConfig for the emulator, reached through the counting proxy. */
function throughProxy(): KubeConfig {
  const kc = emu.kubeConfig();
  const cluster = kc.getCurrentCluster()!;
  const kc2 = new KubeConfig();
  kc2.loadFromOptions({
    clusters: [{ ...cluster, server: `http://127.0.0.1:${proxy.port}` }],
    users: kc.users,
    contexts: kc.contexts,
    currentContext: kc.currentContext,
  });
  return kc2;
}

async function connectionsFor(kc: KubeConfig, requests: number): Promise<number> {
  const before = proxy.accepted();
  const core = kc.makeApiClient(CoreV1Api);
  for (let i = 0; i < requests; i++) await core.listNamespacedConfigMap({ namespace: 'default' });
  return proxy.accepted() - before;
}

test('twenty requests one after another use one connection, where client-node alone opens twenty', async () => {
  expect(await connectionsFor(throughProxy(), 20)).toBe(20);
  expect(await connectionsFor(withConnectionReuse(throughProxy()), 20)).toBe(1);
});

test('requests side by side open only as many connections as are in flight', async () => {
  const kc = withConnectionReuse(throughProxy());
  const core = kc.makeApiClient(CoreV1Api);
  const before = proxy.accepted();
  for (let round = 0; round < 5; round++) {
    await Promise.all(
      Array.from({ length: 4 }, () => core.listNamespacedConfigMap({ namespace: 'default' })),
    );
  }
  expect(proxy.accepted() - before).toBeLessThanOrEqual(4);
});
