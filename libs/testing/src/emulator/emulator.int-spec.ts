// Protocol tests of the Kubernetes API emulator through an unmodified @kubernetes/client-node:
// each test names the API-server behaviour it proves (conflicts, generation, status, watch, GC).
import { fileURLToPath } from 'node:url';
import {
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  Watch,
  makeInformer,
  setHeaderOptions,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { startEmulator, type Emulator } from './start.js';
import { apiFailure, eventually } from './test-support.js';

const crdDir = fileURLToPath(new URL('./testdata', import.meta.url));
const W = { group: 'emulator.test', version: 'v1', plural: 'widgets' } as const;
const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

let emu: Emulator;
let co: CustomObjectsApi;
let core: CoreV1Api;
let ns = 'default';
let counter = 0;

function widget(
  name: string,
  spec: Record<string, unknown> = { size: 1 },
  metadata: Record<string, unknown> = {},
) {
  return { apiVersion: 'emulator.test/v1', kind: 'Widget', metadata: { name, ...metadata }, spec };
}

beforeAll(async () => {
  emu = await startEmulator({ crdDir, bookmarkIntervalMs: 50, admission: null });
  co = emu.kubeConfig().makeApiClient(CustomObjectsApi);
  core = emu.kubeConfig().makeApiClient(CoreV1Api);
});

afterAll(async () => {
  await emu.stop();
});

beforeEach(() => {
  counter += 1;
  ns = `t${counter}`;
});

describe('objects', () => {
  test('create assigns uid, creationTimestamp, resourceVersion and generation 1', async () => {
    const created = await co.createNamespacedCustomObject({ ...W, namespace: ns, body: widget('a') });
    expect(created.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.metadata.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(Number(created.metadata.resourceVersion)).toBeGreaterThan(0);
    expect(created.metadata.generation).toBe(1);
    expect(created.metadata.namespace).toBe(ns);
    const read = await co.getNamespacedCustomObject({ ...W, namespace: ns, name: 'a' });
    expect(read).toEqual(created);
  });

  test('creating an existing name answers 409 AlreadyExists with the API server Status body', async () => {
    await co.createNamespacedCustomObject({ ...W, namespace: ns, body: widget('dup') });
    const failure = await apiFailure(
      co.createNamespacedCustomObject({ ...W, namespace: ns, body: widget('dup') }),
    );
    expect(failure.code).toBe(409);
    expect(failure.body).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'widgets.emulator.test "dup" already exists',
      reason: 'AlreadyExists',
      details: { name: 'dup', group: 'emulator.test', kind: 'widgets' },
      code: 409,
    });
  });

  test('reading a missing object answers 404 NotFound', async () => {
    const failure = await apiFailure(co.getNamespacedCustomObject({ ...W, namespace: ns, name: 'nope' }));
    expect(failure.code).toBe(404);
    expect(failure.body.reason).toBe('NotFound');
    expect(failure.body.message).toBe('widgets.emulator.test "nope" not found');
    const secret = await apiFailure(core.readNamespacedSecret({ namespace: ns, name: 'nope' }));
    expect(secret.body.message).toBe('secrets "nope" not found');
  });

  test('replace with a stale resourceVersion answers 409 Conflict; the current version succeeds', async () => {
    const created = await co.createNamespacedCustomObject({ ...W, namespace: ns, body: widget('c') });
    const fresh = await co.replaceNamespacedCustomObject({
      ...W,
      namespace: ns,
      name: 'c',
      body: { ...created, spec: { size: 2 } },
    });
    const stale = await apiFailure(
      co.replaceNamespacedCustomObject({
        ...W,
        namespace: ns,
        name: 'c',
        body: { ...created, spec: { size: 3 } },
      }),
    );
    expect(stale.code).toBe(409);
    expect(stale.body.reason).toBe('Conflict');
    expect(stale.body.message).toBe(
      'Operation cannot be fulfilled on widgets.emulator.test "c": the object has been modified; please apply your changes to the latest version and try again',
    );
    expect(fresh.spec).toEqual({ size: 2 });
  });

  test('a merge patch carrying a stale resourceVersion answers 409 Conflict', async () => {
    const created = await co.createNamespacedCustomObject({ ...W, namespace: ns, body: widget('m') });
    await co.patchNamespacedCustomObject(
      { ...W, namespace: ns, name: 'm', body: { spec: { size: 5 } } },
      merge,
    );
    const failure = await apiFailure(
      co.patchNamespacedCustomObject(
        {
          ...W,
          namespace: ns,
          name: 'm',
          body: { metadata: { resourceVersion: created.metadata.resourceVersion }, spec: { size: 6 } },
        },
        merge,
      ),
    );
    expect(failure.code).toBe(409);
  });

  test('custom resources refuse an update without resourceVersion (422)', async () => {
    await co.createNamespacedCustomObject({ ...W, namespace: ns, body: widget('u') });
    const failure = await apiFailure(
      co.replaceNamespacedCustomObject({ ...W, namespace: ns, name: 'u', body: widget('u') }),
    );
    expect(failure.code).toBe(422);
    expect(failure.body.message).toContain('metadata.resourceVersion');
  });

  test('JSON patch applies operations and a failed test operation changes nothing', async () => {
    await co.createNamespacedCustomObject({
      ...W,
      namespace: ns,
      body: widget('j', { size: 1, tags: ['a'] }),
    });
    const patched = await co.patchNamespacedCustomObject({
      ...W,
      namespace: ns,
      name: 'j',
      body: [
        { op: 'add', path: '/spec/tags/-', value: 'b' },
        { op: 'replace', path: '/spec/size', value: 4 },
      ],
    });
    expect(patched.spec).toEqual({ size: 4, tags: ['a', 'b'] });
    const failure = await apiFailure(
      co.patchNamespacedCustomObject({
        ...W,
        namespace: ns,
        name: 'j',
        body: [
          { op: 'test', path: '/spec/size', value: 99 },
          { op: 'replace', path: '/spec/size', value: 7 },
        ],
      }),
    );
    expect(failure.code).toBe(422);
    const read = await co.getNamespacedCustomObject({ ...W, namespace: ns, name: 'j' });
    expect(read.spec.size).toBe(4);
  });

  test('a merge patch with null removes the field', async () => {
    await co.createNamespacedCustomObject({
      ...W,
      namespace: ns,
      body: widget('n', { size: 1, color: 'red' }),
    });
    const patched = await co.patchNamespacedCustomObject(
      { ...W, namespace: ns, name: 'n', body: { spec: { color: null } } },
      merge,
    );
    expect(patched.spec).toEqual({ size: 1 });
  });

  test('a no-op write keeps the resourceVersion', async () => {
    const created = await co.createNamespacedCustomObject({ ...W, namespace: ns, body: widget('noop') });
    const same = await co.patchNamespacedCustomObject(
      { ...W, namespace: ns, name: 'noop', body: { spec: { size: 1 } } },
      merge,
    );
    expect(same.metadata.resourceVersion).toBe(created.metadata.resourceVersion);
  });

  test('list filters by label selector (equality and set based)', async () => {
    await co.createNamespacedCustomObject({
      ...W,
      namespace: ns,
      body: widget('l1', {}, { labels: { tier: 'db', team: 'a' } }),
    });
    await co.createNamespacedCustomObject({
      ...W,
      namespace: ns,
      body: widget('l2', {}, { labels: { tier: 'web', team: 'a' } }),
    });
    await co.createNamespacedCustomObject({
      ...W,
      namespace: ns,
      body: widget('l3', {}, { labels: { tier: 'db' } }),
    });
    const names = async (labelSelector: string) =>
      (
        (await co.listNamespacedCustomObject({ ...W, namespace: ns, labelSelector }))
          .items as KubernetesObject[]
      ).map((o) => o.metadata!.name);
    expect(await names('tier=db')).toEqual(['l1', 'l3']);
    expect(await names('tier=db,team=a')).toEqual(['l1']);
    expect(await names('tier in (web, db),!team')).toEqual(['l3']);
    expect(await names('tier!=db')).toEqual(['l2']);
    const list = await co.listNamespacedCustomObject({ ...W, namespace: ns });
    expect(list.kind).toBe('WidgetList');
    expect(Number(list.metadata.resourceVersion)).toBeGreaterThan(0);
  });

  test('generateName gets a random suffix', async () => {
    const created = await co.createNamespacedCustomObject({
      ...W,
      namespace: ns,
      body: { apiVersion: 'emulator.test/v1', kind: 'Widget', metadata: { generateName: 'gen-' }, spec: {} },
    });
    expect(created.metadata.name).toMatch(/^gen-[0-9a-z]{5}$/);
  });
});

describe('generation and the status subresource', () => {
  test('metadata.generation is bumped by spec changes only, not by metadata or status changes', async () => {
    await co.createNamespacedCustomObject({ ...W, namespace: ns, body: widget('g') });
    const labelled = await co.patchNamespacedCustomObject(
      { ...W, namespace: ns, name: 'g', body: { metadata: { labels: { x: 'y' } } } },
      merge,
    );
    expect(labelled.metadata.generation).toBe(1);
    const status = await co.patchNamespacedCustomObjectStatus(
      { ...W, namespace: ns, name: 'g', body: { status: { phase: 'Ready' } } },
      merge,
    );
    expect(status.metadata.generation).toBe(1);
    const spec = await co.patchNamespacedCustomObject(
      { ...W, namespace: ns, name: 'g', body: { spec: { size: 9 } } },
      merge,
    );
    expect(spec.metadata.generation).toBe(2);
  });

  test('status written through the main resource is ignored, also on create', async () => {
    const created = await co.createNamespacedCustomObject({
      ...W,
      namespace: ns,
      body: { ...widget('s'), status: { phase: 'Forged' } },
    });
    expect(created.status).toBeUndefined();
    const patched = await co.patchNamespacedCustomObject(
      { ...W, namespace: ns, name: 's', body: { status: { phase: 'Forged' }, spec: { size: 2 } } },
      merge,
    );
    expect(patched.status).toBeUndefined();
    expect(patched.spec.size).toBe(2);
  });

  test('the /status subresource changes status only; spec and labels sent there are ignored', async () => {
    await co.createNamespacedCustomObject({ ...W, namespace: ns, body: widget('st') });
    const updated = await co.patchNamespacedCustomObjectStatus(
      {
        ...W,
        namespace: ns,
        name: 'st',
        body: { metadata: { labels: { sneaky: 'yes' } }, spec: { size: 100 }, status: { phase: 'Ready' } },
      },
      merge,
    );
    expect(updated.status).toEqual({ phase: 'Ready' });
    expect(updated.spec).toEqual({ size: 1 });
    expect(updated.metadata.labels).toBeUndefined();
    const replaced = await co.replaceNamespacedCustomObjectStatus({
      ...W,
      namespace: ns,
      name: 'st',
      body: { ...updated, status: { phase: 'Done' } },
    });
    expect(replaced.status).toEqual({ phase: 'Done' });
    const stale = await apiFailure(
      co.replaceNamespacedCustomObjectStatus({
        ...W,
        namespace: ns,
        name: 'st',
        body: { ...updated, status: { phase: 'Old' } },
      }),
    );
    expect(stale.code).toBe(409);
  });
});

describe('admission hook', () => {
  afterEach(() => emu.setAdmission(undefined));

  test('a denied write answers 422 Invalid with the rule message; an allowed one stores the mutated object', async () => {
    emu.setAdmission((req) => {
      if (req.resource.kind !== 'Widget') return { allowed: true };
      const spec = (req.object['spec'] ?? {}) as Record<string, unknown>;
      if (spec['size'] === 0) {
        return {
          allowed: false,
          causes: [{ field: 'spec.size', message: 'Invalid value: "integer": size must be positive' }],
        };
      }
      return { allowed: true, object: { ...req.object, spec: { color: 'grey', ...spec } } };
    });
    const failure = await apiFailure(
      co.createNamespacedCustomObject({ ...W, namespace: ns, body: widget('bad', { size: 0 }) }),
    );
    expect(failure.code).toBe(422);
    expect(failure.body.reason).toBe('Invalid');
    expect(failure.body.message).toBe(
      'Widget.emulator.test "bad" is invalid: spec.size: Invalid value: "integer": size must be positive',
    );
    expect(failure.body.details).toEqual({
      name: 'bad',
      group: 'emulator.test',
      kind: 'Widget',
      causes: [
        {
          reason: 'FieldValueInvalid',
          message: 'Invalid value: "integer": size must be positive',
          field: 'spec.size',
        },
      ],
    });
    const created = await co.createNamespacedCustomObject({
      ...W,
      namespace: ns,
      body: widget('good', { size: 2 }),
    });
    expect(created.spec).toEqual({ color: 'grey', size: 2 });
  });

  test('the hook sees the stored object as oldObject on update, including status writes', async () => {
    const seen: string[] = [];
    emu.setAdmission((req) => {
      seen.push(`${req.operation}:${req.subresource}:${req.oldObject ? 'old' : 'none'}`);
      return { allowed: true };
    });
    await co.createNamespacedCustomObject({ ...W, namespace: ns, body: widget('h') });
    await co.patchNamespacedCustomObjectStatus(
      { ...W, namespace: ns, name: 'h', body: { status: { phase: 'x' } } },
      merge,
    );
    expect(seen).toEqual(['CREATE::none', 'UPDATE:status:old']);
  });
});

describe('watch', () => {
  test('a watch from a list resourceVersion sees ADDED, MODIFIED and DELETED in order', async () => {
    const list = await co.listNamespacedCustomObject({ ...W, namespace: ns });
    const events: string[] = [];
    const watch = new Watch(emu.kubeConfig());
    const ctl = await watch.watch(
      `/apis/emulator.test/v1/namespaces/${ns}/widgets`,
      { resourceVersion: list.metadata.resourceVersion },
      (type, obj: KubernetesObject) => events.push(`${type}:${obj.metadata?.name}`),
      () => undefined,
    );
    await co.createNamespacedCustomObject({ ...W, namespace: ns, body: widget('w') });
    await co.patchNamespacedCustomObject(
      { ...W, namespace: ns, name: 'w', body: { spec: { size: 2 } } },
      merge,
    );
    await co.deleteNamespacedCustomObject({ ...W, namespace: ns, name: 'w' });
    await eventually('three events', () => events.length >= 3);
    ctl.abort();
    expect(events).toEqual(['ADDED:w', 'MODIFIED:w', 'DELETED:w']);
  });

  test('a watch resuming from an older resourceVersion replays the changes made since', async () => {
    const list = await co.listNamespacedCustomObject({ ...W, namespace: ns });
    await co.createNamespacedCustomObject({ ...W, namespace: ns, body: widget('r1') });
    await co.createNamespacedCustomObject({ ...W, namespace: ns, body: widget('r2') });
    const events: string[] = [];
    const ctl = await new Watch(emu.kubeConfig()).watch(
      `/apis/emulator.test/v1/namespaces/${ns}/widgets`,
      { resourceVersion: list.metadata.resourceVersion },
      (type, obj: KubernetesObject) => events.push(`${type}:${obj.metadata?.name}`),
      () => undefined,
    );
    await eventually('replayed events', () => events.length >= 2);
    ctl.abort();
    expect(events).toEqual(['ADDED:r1', 'ADDED:r2']);
  });

  test('a watch with allowWatchBookmarks receives BOOKMARK events carrying the current resourceVersion', async () => {
    const list = await co.listNamespacedCustomObject({ ...W, namespace: ns });
    const bookmarks: string[] = [];
    const ctl = await new Watch(emu.kubeConfig()).watch(
      `/apis/emulator.test/v1/namespaces/${ns}/widgets`,
      { resourceVersion: list.metadata.resourceVersion, allowWatchBookmarks: true },
      (type, obj: KubernetesObject) => {
        if (type === 'BOOKMARK') bookmarks.push(obj.metadata!.resourceVersion!);
      },
      () => undefined,
    );
    await co.createNamespacedCustomObject({ ...W, namespace: ns, body: widget('b') });
    const rv = String(emu.resourceVersion());
    await eventually('a bookmark at the newest version', () => bookmarks.includes(rv));
    ctl.abort();
  });

  test('a watch from a resourceVersion older than the kept history gets 410 Gone (Expired) and the stream ends', async () => {
    const list = await co.listNamespacedCustomObject({ ...W, namespace: ns });
    await co.createNamespacedCustomObject({ ...W, namespace: ns, body: widget('old') });
    emu.compactHistory();
    const events: { type: string; obj: any }[] = [];
    let ended = false;
    await new Watch(emu.kubeConfig()).watch(
      `/apis/emulator.test/v1/namespaces/${ns}/widgets`,
      { resourceVersion: list.metadata.resourceVersion },
      (type, obj) => events.push({ type, obj }),
      () => {
        ended = true;
      },
    );
    await eventually('the stream to end', () => ended);
    expect(events).toHaveLength(1);
    expect(events[0]!.type).toBe('ERROR');
    expect(events[0]!.obj).toMatchObject({ kind: 'Status', code: 410, reason: 'Expired' });
  });

  test('an informer re-lists after 410 without losing changes made while it was disconnected', async () => {
    const kc = emu.kubeConfig();
    const path = `/apis/emulator.test/v1/namespaces/${ns}/widgets`;
    const informer = makeInformer<KubernetesObject>(kc, path, () =>
      co.listNamespacedCustomObject({ ...W, namespace: ns }),
    );
    const seen: string[] = [];
    informer.on('add', (o) => seen.push(`add:${o.metadata!.name}`));
    informer.on('update', (o) => seen.push(`update:${o.metadata!.name}`));
    informer.on('delete', (o) => seen.push(`delete:${o.metadata!.name}`));
    await co.createNamespacedCustomObject({ ...W, namespace: ns, body: widget('keep') });
    await co.createNamespacedCustomObject({ ...W, namespace: ns, body: widget('drop') });
    await informer.start();
    await eventually('initial adds', () => seen.length >= 2);
    // Shrink the history so the informer's resume version expires, then cut its stream.
    emu.setHistoryLimit(1);
    await co.patchNamespacedCustomObject(
      { ...W, namespace: ns, name: 'keep', body: { spec: { size: 3 } } },
      merge,
    );
    await co.deleteNamespacedCustomObject({ ...W, namespace: ns, name: 'drop' });
    await co.createNamespacedCustomObject({ ...W, namespace: ns, body: widget('new') });
    emu.endWatches();
    await eventually('the informer cache to converge', () => {
      const names = informer
        .list(ns)
        .map((o) => o.metadata!.name)
        .sort();
      return names.join(',') === 'keep,new' && (informer.get('keep', ns) as any)?.spec?.size === 3;
    });
    await informer.stop();
    emu.setHistoryLimit(10_000);
    expect(seen).toEqual(
      expect.arrayContaining(['add:keep', 'add:drop', 'update:keep', 'delete:drop', 'add:new']),
    );
  });

  test('a label-selected watch sees an object leave the selection as DELETED', async () => {
    await co.createNamespacedCustomObject({
      ...W,
      namespace: ns,
      body: widget('sel', {}, { labels: { app: 'x' } }),
    });
    const list = await co.listNamespacedCustomObject({ ...W, namespace: ns, labelSelector: 'app=x' });
    const events: string[] = [];
    const ctl = await new Watch(emu.kubeConfig()).watch(
      `/apis/emulator.test/v1/namespaces/${ns}/widgets`,
      { resourceVersion: list.metadata.resourceVersion, labelSelector: 'app=x' },
      (type, obj: KubernetesObject) => events.push(`${type}:${obj.metadata?.name}`),
      () => undefined,
    );
    await co.patchNamespacedCustomObject(
      { ...W, namespace: ns, name: 'sel', body: { metadata: { labels: { app: 'y' } } } },
      merge,
    );
    await eventually('the deletion', () => events.length >= 1);
    ctl.abort();
    expect(events).toEqual(['DELETED:sel']);
  });
});

describe('deletion', () => {
  test('ownerReferences cascade: deleting the owner deletes its dependents (background)', async () => {
    const owner = await co.createNamespacedCustomObject({ ...W, namespace: ns, body: widget('owner') });
    const ref = {
      apiVersion: 'emulator.test/v1',
      kind: 'Widget',
      name: 'owner',
      uid: owner.metadata.uid,
      controller: true,
    };
    await core.createNamespacedConfigMap({
      namespace: ns,
      body: { metadata: { name: 'child', ownerReferences: [ref] }, data: { a: 'b' } },
    });
    await co.createNamespacedCustomObject({
      ...W,
      namespace: ns,
      body: widget('child-w', {}, { ownerReferences: [ref] }),
    });
    await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'unrelated' } } });
    await co.deleteNamespacedCustomObject({ ...W, namespace: ns, name: 'owner' });
    expect((await apiFailure(core.readNamespacedConfigMap({ namespace: ns, name: 'child' }))).code).toBe(404);
    expect(
      (await apiFailure(co.getNamespacedCustomObject({ ...W, namespace: ns, name: 'child-w' }))).code,
    ).toBe(404);
    expect((await core.readNamespacedConfigMap({ namespace: ns, name: 'unrelated' })).metadata?.name).toBe(
      'unrelated',
    );
  });

  test('propagationPolicy Orphan keeps dependents and removes the owner reference', async () => {
    const owner = await co.createNamespacedCustomObject({ ...W, namespace: ns, body: widget('owner') });
    const ref = { apiVersion: 'emulator.test/v1', kind: 'Widget', name: 'owner', uid: owner.metadata.uid };
    await core.createNamespacedConfigMap({
      namespace: ns,
      body: { metadata: { name: 'child', ownerReferences: [ref] } },
    });
    await co.deleteNamespacedCustomObject({
      ...W,
      namespace: ns,
      name: 'owner',
      propagationPolicy: 'Orphan',
    });
    const child = await core.readNamespacedConfigMap({ namespace: ns, name: 'child' });
    expect(child.metadata?.ownerReferences ?? []).toEqual([]);
  });

  test('finalizers hold a deleted object with deletionTimestamp until the last one is removed', async () => {
    await co.createNamespacedCustomObject({
      ...W,
      namespace: ns,
      body: widget('f', {}, { finalizers: ['rolepolicy.io/cleanup'] }),
    });
    const deleting = await co.deleteNamespacedCustomObject({ ...W, namespace: ns, name: 'f' });
    expect(deleting.metadata.deletionTimestamp).toBeDefined();
    expect(deleting.metadata.generation).toBe(2);
    const read = await co.getNamespacedCustomObject({ ...W, namespace: ns, name: 'f' });
    expect(read.metadata.deletionTimestamp).toBe(deleting.metadata.deletionTimestamp);
    const adding = await apiFailure(
      co.patchNamespacedCustomObject(
        {
          ...W,
          namespace: ns,
          name: 'f',
          body: { metadata: { finalizers: ['rolepolicy.io/cleanup', 'other'] } },
        },
        merge,
      ),
    );
    expect(adding.code).toBe(422);
    expect(adding.body.message).toContain('no new finalizers can be added if the object is being deleted');
    await co.patchNamespacedCustomObject(
      { ...W, namespace: ns, name: 'f', body: { metadata: { finalizers: null } } },
      merge,
    );
    expect((await apiFailure(co.getNamespacedCustomObject({ ...W, namespace: ns, name: 'f' }))).code).toBe(
      404,
    );
  });

  test('delete preconditions on uid and resourceVersion answer 409 when they do not hold', async () => {
    await co.createNamespacedCustomObject({ ...W, namespace: ns, body: widget('p') });
    const failure = await apiFailure(
      co.deleteNamespacedCustomObject({
        ...W,
        namespace: ns,
        name: 'p',
        body: { preconditions: { resourceVersion: '1' } },
      }),
    );
    expect(failure.code).toBe(409);
  });

  test('deleting a namespace deletes everything in it', async () => {
    await co.createNamespacedCustomObject({ ...W, namespace: ns, body: widget('x') });
    await core.createNamespacedSecret({
      namespace: ns,
      body: { metadata: { name: 's' }, stringData: { k: 'v' } },
    });
    await core.deleteNamespace({ name: ns });
    expect((await apiFailure(core.readNamespace({ name: ns }))).code).toBe(404);
    expect((await apiFailure(core.readNamespacedSecret({ namespace: ns, name: 's' }))).code).toBe(404);
  });
});

describe('built-in kinds', () => {
  test('Secrets store stringData base64-encoded in data', async () => {
    const created = await core.createNamespacedSecret({
      namespace: ns,
      body: { metadata: { name: 'conn' }, stringData: { url: 'postgres://u@h/db' }, type: 'Opaque' },
    });
    expect(created.data).toEqual({ url: Buffer.from('postgres://u@h/db').toString('base64') });
    expect((created as any).stringData).toBeUndefined();
  });

  test('Leases support create, read and optimistic replace', async () => {
    const coord = emu.kubeConfig().makeApiClient(CoordinationV1Api);
    const lease = await coord.createNamespacedLease({
      namespace: ns,
      body: { metadata: { name: 'gw' }, spec: { holderIdentity: 'a', leaseDurationSeconds: 15 } },
    });
    const renewed = await coord.replaceNamespacedLease({
      namespace: ns,
      name: 'gw',
      body: { ...lease, spec: { ...lease.spec, holderIdentity: 'b' } },
    });
    expect(renewed.spec?.holderIdentity).toBe('b');
    const stale = await apiFailure(
      coord.replaceNamespacedLease({ namespace: ns, name: 'gw', body: { ...lease } }),
    );
    expect(stale.code).toBe(409);
  });

  test('Events can be created and listed', async () => {
    await core.createNamespacedEvent({
      namespace: ns,
      body: {
        metadata: { generateName: 'w.' },
        involvedObject: { kind: 'Widget', name: 'w', namespace: ns },
        reason: 'Applied',
        message: 'done',
        type: 'Normal',
      },
    });
    const events = await core.listNamespacedEvent({ namespace: ns });
    expect(events.items.map((e) => e.reason)).toEqual(['Applied']);
  });

  test('discovery lists the installed CRD group and its resources', async () => {
    const res = await fetch(`${emu.url}/apis/emulator.test/v1`);
    const doc = (await res.json()) as { resources: { name: string }[] };
    expect(doc.resources.map((r) => r.name)).toEqual(['widgets', 'widgets/status']);
  });
});
