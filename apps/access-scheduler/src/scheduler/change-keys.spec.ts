// Which passes a cache change wakes, and what a rebuild runs: the access-scheduler's event-to-key mapping.
import { fieldReadersOf, type Cached, type ResourceCache, type ResourceChange } from '@rolepolicy/contracts';
import { EPHEMERAL_REQUEST_ORIGIN } from '@rolepolicy/policy';
import { accessPolicy, request, targetPolicy } from '../lifecycle/test-support/fixtures.js';
import { rebuildWakes, requestsOf, wakesOf, type Wake } from './change-keys.js';

type Kinds = {
  ephemeralaccesspolicy?: readonly Cached<'ephemeralaccesspolicy'>[];
  ephemeralaccessrequest?: readonly Cached<'ephemeralaccessrequest'>[];
  postgrespolicy?: readonly Cached<'postgrespolicy'>[];
};

/**
 * The cache's list and field lookups, over fixed objects, the lookups as filtering the list (what the
 * cache's indexes answer: indexed-objects.spec.ts; the cache itself is tested against NATS in libs/contracts).
 */
function cacheOf(kinds: Kinds): Pick<ResourceCache, 'list' | 'withFields'> {
  const list = (kind: string, ns?: string) =>
    ((kinds as Record<string, readonly Cached<'postgrespolicy'>[] | undefined>)[kind] ?? []).filter(
      (o) => ns === undefined || o.metadata.namespace === ns,
    );
  const withFields = (
    kind: 'ephemeralaccessrequest',
    ns: string,
    wanted: Record<string, string | undefined>,
  ) =>
    list(kind, ns).filter((o) =>
      Object.entries(wanted).some(
        ([field, value]) => value !== undefined && fieldReadersOf(kind)[field]?.(o as never) === value,
      ),
    );
  return { list, withFields } as Pick<ResourceCache, 'list' | 'withFields'>;
}

const named = <T>(o: unknown): T => o as T;
const eap = (name: string, target = 'orders', uid = `uid-${name}`) =>
  named<Cached<'ephemeralaccesspolicy'>>({
    ...accessPolicy({ postgresPolicyRef: { name: target } }),
    metadata: { name, namespace: 'team-a', uid },
  });
const req = (name: string, policy: string, phase?: string, resolvedUid?: string) =>
  named<Cached<'ephemeralaccessrequest'>>({
    ...request(
      phase === undefined
        ? undefined
        : named({ phase, ...(resolvedUid ? { resolvedAccess: { accessPolicyUid: resolvedUid } } : {}) }),
      { accessPolicyRef: { name: policy } },
    ),
    metadata: { name, namespace: 'team-a', uid: `uid-${name}` },
  });
const orders = named<Cached<'postgrespolicy'>>(targetPolicy());

const change = (c: Partial<ResourceChange> & Pick<ResourceChange, 'kind' | 'name'>): ResourceChange =>
  named({ type: 'upsert', namespace: 'team-a', ...c });

describe('requestsOf', () => {
  it('finds the requests naming the access policy, and those resolved to its uid under another name', () => {
    const cache = cacheOf({
      ephemeralaccessrequest: [
        req('a', 'read'),
        req('b', 'renamed', 'Active', 'uid-read'),
        req('c', 'other'),
      ],
    });
    expect(requestsOf(cache, 'team-a', 'read', 'uid-read').map((r) => r.metadata.name)).toEqual(['a', 'b']);
    expect(requestsOf(cache, 'team-a', 'read', undefined).map((r) => r.metadata.name)).toEqual(['a']);
    expect(requestsOf(cache, 'team-b', 'read', 'uid-read')).toEqual([]);
  });
});

describe('wakesOf', () => {
  it('a request wakes itself and the access policy it names (every one of the namespace when it is gone)', () => {
    const cache = cacheOf({ ephemeralaccesspolicy: [eap('read'), eap('write')] });
    const object = req('a', 'read');
    expect(wakesOf(change({ kind: 'ephemeralaccessrequest', name: 'a', object }), cache)).toEqual<Wake[]>([
      { kind: 'request', namespace: 'team-a', name: 'a' },
      { kind: 'accessPolicy', namespace: 'team-a', name: 'read' },
    ]);
    expect(wakesOf(change({ kind: 'ephemeralaccessrequest', name: 'a', type: 'delete' }), cache)).toEqual<
      Wake[]
    >([
      { kind: 'request', namespace: 'team-a', name: 'a' },
      { kind: 'accessPolicy', namespace: 'team-a', name: 'read' },
      { kind: 'accessPolicy', namespace: 'team-a', name: 'write' },
    ]);
  });

  it('an access policy wakes itself and its requests', () => {
    const cache = cacheOf({ ephemeralaccessrequest: [req('a', 'read'), req('b', 'write')] });
    const object = eap('read');
    expect(wakesOf(change({ kind: 'ephemeralaccesspolicy', name: 'read', object }), cache)).toEqual<Wake[]>([
      { kind: 'accessPolicy', namespace: 'team-a', name: 'read' },
      { kind: 'request', namespace: 'team-a', name: 'a' },
    ]);
  });

  it('a target policy wakes its finalizer sync, the access policies naming it, and only their unsettled requests', () => {
    const cache = cacheOf({
      ephemeralaccesspolicy: [eap('read'), eap('elsewhere', 'billing')],
      ephemeralaccessrequest: [
        req('new', 'read'),
        req('waiting', 'read', 'PendingApproval'),
        req('applying', 'read', 'Applying'),
        req('active', 'read', 'Active'),
        req('revoking', 'read', 'Revoking'),
        req('other', 'elsewhere'),
      ],
    });
    expect(wakesOf(change({ kind: 'postgrespolicy', name: 'orders', object: orders }), cache)).toEqual<
      Wake[]
    >([
      { kind: 'target', namespace: 'team-a', uid: 'uid-orders' },
      { kind: 'accessPolicy', namespace: 'team-a', name: 'read' },
      { kind: 'request', namespace: 'team-a', name: 'new' },
      { kind: 'request', namespace: 'team-a', name: 'waiting' },
      { kind: 'request', namespace: 'team-a', name: 'applying' },
    ]);
    // Deleted: no object, so no finalizer sync; the access policies still look.
    expect(
      wakesOf(change({ kind: 'postgrespolicy', name: 'orders', type: 'delete' }), cache).map((w) => w.kind),
    ).toEqual(['accessPolicy', 'request', 'request', 'request']);
  });

  it("a scoped plan wakes its request; another plan's delete wakes every request of the namespace", () => {
    const cache = cacheOf({ ephemeralaccessrequest: [req('a', 'read'), req('b', 'read')] });
    const scoped = named<Cached<'postgrespolicyplan'>>({
      metadata: { name: 'p', namespace: 'team-a' },
      spec: { origin: { kind: EPHEMERAL_REQUEST_ORIGIN, name: 'a' } },
    });
    expect(wakesOf(change({ kind: 'postgrespolicyplan', name: 'p', object: scoped }), cache)).toEqual<Wake[]>(
      [{ kind: 'request', namespace: 'team-a', name: 'a' }],
    );
    const base = named<Cached<'postgrespolicyplan'>>({
      metadata: { name: 'q', namespace: 'team-a' },
      spec: {},
    });
    expect(wakesOf(change({ kind: 'postgrespolicyplan', name: 'q', object: base }), cache)).toEqual([]);
    expect(
      wakesOf(change({ kind: 'postgrespolicyplan', name: 'q', type: 'delete' }), cache).map((w) => w.kind),
    ).toEqual(['request', 'request']);
  });

  it('a Secret or ConfigMap wakes nothing', () => {
    expect(wakesOf(change({ kind: 'secret', name: 'db' }), cacheOf({}))).toEqual([]);
    expect(wakesOf(change({ kind: 'configmap', name: 'sinks' }), cacheOf({}))).toEqual([]);
  });
});

describe('rebuildWakes', () => {
  it('runs every access policy and request, and the guarded targets only; counts requests per phase', () => {
    const unguarded = named<Cached<'postgrespolicy'>>({
      ...targetPolicy(),
      metadata: { name: 'billing', namespace: 'team-a', uid: 'uid-billing', finalizers: [] },
    });
    const cache = cacheOf({
      ephemeralaccesspolicy: [eap('read')],
      ephemeralaccessrequest: [req('a', 'read'), req('b', 'read', 'Active'), req('c', 'read', 'Active')],
      postgrespolicy: [orders, unguarded],
    });
    const { wakes, phases } = rebuildWakes(cache);
    expect(wakes).toEqual<Wake[]>([
      { kind: 'accessPolicy', namespace: 'team-a', name: 'read' },
      { kind: 'request', namespace: 'team-a', name: 'a' },
      { kind: 'request', namespace: 'team-a', name: 'b' },
      { kind: 'request', namespace: 'team-a', name: 'c' },
      { kind: 'target', namespace: 'team-a', uid: 'uid-orders' },
    ]);
    expect(phases).toEqual({ Pending: 1, Active: 2 });
  });
});
