// kubectl's imperative commands against the emulator. kubectl's typed clients send core kinds
// (Namespace, Secret, ConfigMap, ServiceAccount) in the Kubernetes protobuf encoding and read them
// back the same way (describe); each command must succeed and its effect must read back.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { kubectlFor, type Kubectl } from './kubectl-runner.js';
import { decodeProtobuf, encodeProtobuf, PROTOBUF_CONTENT_TYPE } from './protobuf.js';
import { startEmulator, type Emulator } from './start.js';

const coreKinds = fileURLToPath(new URL('./testdata/core-kinds.yaml', import.meta.url));

let emu: Emulator;
let cacheDir: string;
let kubectl: Kubectl;

beforeAll(async () => {
  emu = await startEmulator();
  cacheDir = await mkdtemp(join(tmpdir(), 'rp-kubectl-cache-'));
  kubectl = kubectlFor(emu.kubeconfigPath, cacheDir);
});

afterAll(async () => {
  await emu.stop();
  await rm(cacheDir, { recursive: true, force: true });
});

const jsonpath = (kind: string, name: string, path: string) =>
  kubectl.ok('get', kind, name, '-n', 'shop', '-o', `jsonpath=${path}`);

test('kubectl create namespace, secret generic --from-literal, configmap --from-literal, serviceaccount', async () => {
  expect(await kubectl.ok('create', 'namespace', 'shop')).toBe('namespace/shop created\n');
  expect(await kubectl.ok('get', 'namespace', 'shop', '-o', 'jsonpath={.status.phase}')).toBe('Active');

  const secret = await kubectl.ok(
    'create',
    'secret',
    'generic',
    'db-admin',
    '-n',
    'shop',
    '--from-literal=username=admin',
    '--from-literal=password=s3cr3t-value',
  );
  expect(secret).toBe('secret/db-admin created\n');
  const password = await jsonpath('secret', 'db-admin', '{.data.password}');
  expect(Buffer.from(password, 'base64').toString()).toBe('s3cr3t-value');
  expect(await jsonpath('secret', 'db-admin', '{.type}')).toBe('Opaque');

  expect(
    await kubectl.ok('create', 'configmap', 'settings-cli', '-n', 'shop', '--from-literal=mode=plan'),
  ).toBe('configmap/settings-cli created\n');
  expect(await jsonpath('configmap', 'settings-cli', '{.data.mode}')).toBe('plan');

  expect(await kubectl.ok('create', 'serviceaccount', 'gateway', '-n', 'shop')).toBe(
    'serviceaccount/gateway created\n',
  );
  expect(await jsonpath('serviceaccount', 'gateway', '{.metadata.name}')).toBe('gateway');
});

test('kubectl label, annotate and patch --type=merge change the objects and read back', async () => {
  expect(await kubectl.ok('label', 'secret', 'db-admin', '-n', 'shop', 'team=orders')).toBe(
    'secret/db-admin labeled\n',
  );
  expect(await jsonpath('secret', 'db-admin', '{.metadata.labels.team}')).toBe('orders');
  expect(
    await kubectl.ok('annotate', 'configmap', 'settings-cli', '-n', 'shop', 'rolepolicy.io/owner=platform'),
  ).toBe('configmap/settings-cli annotated\n');
  expect(
    await jsonpath('configmap', 'settings-cli', "{.metadata.annotations['rolepolicy\\.io/owner']}"),
  ).toBe('platform');
  expect(
    await kubectl.ok(
      'patch',
      'configmap',
      'settings-cli',
      '-n',
      'shop',
      '--type=merge',
      '-p',
      '{"data":{"mode":"apply"}}',
    ),
  ).toBe('configmap/settings-cli patched\n');
  expect(await jsonpath('configmap', 'settings-cli', '{.data.mode}')).toBe('apply');
  expect(await kubectl.ok('label', 'namespace', 'shop', 'tier=db')).toBe('namespace/shop labeled\n');
  expect(await kubectl.ok('get', 'namespace', 'shop', '-o', 'jsonpath={.metadata.labels.tier}')).toBe('db');
});

test('kubectl get -o yaml and describe read the objects (describe through protobuf)', async () => {
  const yaml = await kubectl.ok('get', 'configmap', 'settings-cli', '-n', 'shop', '-o', 'yaml');
  expect(yaml).toContain('kind: ConfigMap');
  expect(yaml).toContain('mode: apply');
  expect(yaml).toContain('rolepolicy.io/owner: platform');

  const secret = await kubectl.ok('describe', 'secret', 'db-admin', '-n', 'shop');
  expect(secret).toMatch(/Name:\s+db-admin/);
  expect(secret).toMatch(/Labels:\s+team=orders/);
  expect(secret).toMatch(/Type:\s+Opaque/);
  expect(secret).toMatch(/password:\s+12 bytes/);
  expect(secret).not.toContain('s3cr3t-value'); // describe prints sizes, never values

  const namespace = await kubectl.ok('describe', 'namespace', 'shop');
  expect(namespace).toMatch(/Status:\s+Active/);
  const configmap = await kubectl.ok('describe', 'configmap', 'settings-cli', '-n', 'shop');
  expect(configmap).toMatch(/mode:\n-+\napply/);
});

test('kubectl apply -f creates core kinds, and a second apply reports them unchanged', async () => {
  const first = await kubectl.ok('apply', '-f', coreKinds);
  expect(first).toContain('serviceaccount/rolepolicy-planner created');
  expect(first).toContain('configmap/settings created');
  const again = await kubectl.ok('apply', '-f', coreKinds);
  expect(again).toContain('serviceaccount/rolepolicy-planner unchanged');
  expect(again).toContain('configmap/settings unchanged');
  expect(await jsonpath('configmap', 'settings', '{.data.mode}')).toBe('plan');
});

test('kubectl delete removes each kind, and a deleted object reads back as NotFound', async () => {
  expect(await kubectl.ok('delete', 'configmap', 'settings-cli', '-n', 'shop')).toBe(
    'configmap "settings-cli" deleted\n',
  );
  expect(await kubectl.ok('delete', 'secret', 'db-admin', '-n', 'shop')).toBe('secret "db-admin" deleted\n');
  expect(await kubectl.ok('delete', 'serviceaccount', 'gateway', '-n', 'shop')).toBe(
    'serviceaccount "gateway" deleted\n',
  );
  const gone = await kubectl.run('get', 'secret', 'db-admin', '-n', 'shop');
  expect(gone.code).not.toBe(0);
  expect(gone.stderr).toContain('secrets "db-admin" not found');
  expect(await kubectl.ok('delete', 'namespace', 'shop')).toBe('namespace "shop" deleted\n');
  const ns = await kubectl.run('get', 'namespace', 'shop');
  expect(ns.stderr).toContain('namespaces "shop" not found');
});

test('the protobuf encoding round-trips through the HTTP API: k8s\\0 + runtime.Unknown both ways', async () => {
  const body = encodeProtobuf({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'raw', namespace: 'default', labels: { a: 'b' } },
    data: { key: 'value' },
  });
  const created = await fetch(`${emu.url}/api/v1/namespaces/default/configmaps`, {
    method: 'POST',
    headers: { 'Content-Type': PROTOBUF_CONTENT_TYPE, Accept: PROTOBUF_CONTENT_TYPE },
    body,
  });
  expect(created.status).toBe(201);
  expect(created.headers.get('content-type')).toBe(PROTOBUF_CONTENT_TYPE);
  const bytes = Buffer.from(await created.arrayBuffer());
  expect(bytes.subarray(0, 4)).toEqual(Buffer.from('k8s\0'));
  const decoded = decodeProtobuf(bytes);
  expect(decoded).toMatchObject({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'raw', namespace: 'default', labels: { a: 'b' } },
    data: { key: 'value' },
  });
  const asJson = (await (await fetch(`${emu.url}/api/v1/namespaces/default/configmaps/raw`)).json()) as {
    metadata: { uid: string; creationTimestamp: string; resourceVersion: string };
  };
  expect(decoded['metadata']).toMatchObject({
    uid: asJson.metadata.uid,
    creationTimestamp: asJson.metadata.creationTimestamp,
    resourceVersion: asJson.metadata.resourceVersion,
  });
});

test('a protobuf body that is not a served kind is refused with a message naming the kind', async () => {
  const response = await fetch(`${emu.url}/api/v1/namespaces/default/configmaps`, {
    method: 'POST',
    headers: { 'Content-Type': PROTOBUF_CONTENT_TYPE },
    body: Buffer.from('not protobuf'),
  });
  expect(response.status).toBe(400);
  expect(((await response.json()) as { message: string }).message).toContain('missing the k8s\\0 prefix');
});
