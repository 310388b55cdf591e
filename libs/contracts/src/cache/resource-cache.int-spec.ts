// ResourceCache on a real NATS server: latest object per subject, deletes, late start, change listeners,
// invalid payloads skipped, and recovery after the broker restarts.
import { jetstream, jetstreamManager, RetentionPolicy } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import {
  createNatsSandbox,
  eventually,
  startPrivateNatsServer,
  type NatsSandbox,
  type PrivateNatsServer,
} from '@rolepolicy/testing';
import type { ResourceEventV1 } from '../messages/resource-event.js';
import { RESOURCE_KINDS, resourceSubject, type ResourceKindToken } from '../subjects.js';
import { ResourceCache, type ResourceChange } from './resource-cache.js';

/** Waits for `probe` to return something (bounds a hang; not a timing assertion). */
const until = <T>(probe: () => T | undefined | Promise<T | undefined>, what: string, timeoutMs?: number) =>
  eventually(what, probe, timeoutMs);

type Names = { readonly stream: string; readonly root: string };

async function createStream(nc: NatsConnection, names: Names): Promise<void> {
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({
    name: names.stream,
    subjects: [`${names.root}.resource.>`],
    retention: RetentionPolicy.Limits,
  });
}

function event(kind: string, namespace: string, name: string, data: Record<string, string>): ResourceEventV1 {
  return {
    v: 1,
    type: 'upsert',
    object: {
      apiVersion: 'v1',
      kind,
      metadata: { name, namespace },
      spec: data,
    } as ResourceEventV1['object'],
    observedAt: new Date().toISOString(),
  };
}

async function publish(
  nc: NatsConnection,
  names: Names,
  kind: ResourceKindToken,
  namespace: string,
  name: string,
  payload: unknown,
): Promise<void> {
  const subject = resourceSubject(kind, namespace, name, names.root);
  const body = typeof payload === 'string' ? payload : JSON.stringify(payload);
  await jetstream(nc).publish(subject, new TextEncoder().encode(body));
}

const dataOf = (cache: ResourceCache, kind: ResourceKindToken, ns: string, name: string): unknown =>
  (cache.get(kind, ns, name) as { spec?: unknown } | undefined)?.spec;

describe('ResourceCache', () => {
  let sandbox: NatsSandbox;
  let nc: NatsConnection;
  let names: Names;
  const caches: ResourceCache[] = [];
  const warnings: string[] = [];
  const logger = { warn: (m: string) => void warnings.push(m), log: () => undefined };

  beforeAll(async () => {
    sandbox = await createNatsSandbox();
    nc = await connect({ servers: sandbox.url });
    names = { stream: sandbox.stream('resources'), root: sandbox.subject('rp').replace(/\.rp$/, '') };
    await createStream(nc, names);
  });

  afterAll(async () => {
    for (const cache of caches) await cache.stop();
    await nc.close();
    await sandbox.cleanup();
  });

  const start = async (kinds: ResourceKindToken[]): Promise<ResourceCache> => {
    const cache = await ResourceCache.start(nc, {
      kinds,
      stream: names.stream,
      subjectRoot: names.root,
      logger,
    });
    caches.push(cache);
    return cache;
  };

  it('is ready at once on an empty stream and then follows new events', async () => {
    const cache = await start(['configmap']);
    await cache.ready;
    expect(cache.list('configmap')).toEqual([]);
    await publish(nc, names, 'configmap', 'ns-a', 'first', event('ConfigMap', 'ns-a', 'first', { k: '1' }));
    await until(() => cache.get('configmap', 'ns-a', 'first'), 'the new configmap');
  });

  it('keeps the latest object per subject and drops deleted ones; a late cache sees the same state', async () => {
    const early = await start(['secret', 'postgrespolicy']);
    await early.ready;
    const changes: ResourceChange[] = [];
    const unsubscribe = early.onChange((c) => changes.push(c));

    for (let i = 1; i <= 5; i++) {
      await publish(nc, names, 'secret', 'team-a', 'db', event('Secret', 'team-a', 'db', { n: String(i) }));
    }
    await publish(nc, names, 'secret', 'team-a', 'gone', event('Secret', 'team-a', 'gone', { n: 'x' }));
    await publish(nc, names, 'secret', 'team-a', 'gone', {
      ...event('Secret', 'team-a', 'gone', {}),
      type: 'delete',
    });
    await publish(
      nc,
      names,
      'postgrespolicy',
      'team-b',
      'orders',
      event('PostgresPolicy', 'team-b', 'orders', {}),
    );
    await publish(
      nc,
      names,
      'configmap',
      'team-a',
      'other-kind',
      event('ConfigMap', 'team-a', 'other-kind', {}),
    );

    await until(
      () => (dataOf(early, 'secret', 'team-a', 'db') as { n?: string } | undefined)?.n === '5' || undefined,
      'latest secret',
    );
    await until(() => early.get('postgrespolicy', 'team-b', 'orders'), 'the policy');
    await until(
      () => changes.some((c) => c.type === 'delete' && c.name === 'gone') || undefined,
      'delete change',
    );
    expect(early.get('secret', 'team-a', 'gone')).toBeUndefined();
    expect(early.list('secret').map((o) => o.metadata.name)).toEqual(['db']);
    expect(early.list('postgrespolicy', 'team-a')).toEqual([]);
    expect(early.list('postgrespolicy', 'team-b')).toHaveLength(1);
    // Only the kinds asked for are followed.
    expect(early.list('configmap')).toEqual([]);
    expect(changes.filter((c) => c.kind === 'secret' && c.name === 'db' && c.type === 'upsert')).toHaveLength(
      5,
    );

    unsubscribe();
    await publish(nc, names, 'secret', 'team-a', 'db', event('Secret', 'team-a', 'db', { n: '6' }));
    await until(
      () => (dataOf(early, 'secret', 'team-a', 'db') as { n?: string } | undefined)?.n === '6' || undefined,
      'sixth',
    );
    expect(changes.filter((c) => c.name === 'db')).toHaveLength(5);

    // sync(): whatever was published before the call is applied when it resolves, no polling needed.
    await publish(nc, names, 'secret', 'team-a', 'db', event('Secret', 'team-a', 'db', { n: '7' }));
    await publish(nc, names, 'postgrespolicy', 'team-b', 'orders', {
      ...event('PostgresPolicy', 'team-b', 'orders', {}),
      type: 'delete',
    });
    await early.sync();
    expect(dataOf(early, 'secret', 'team-a', 'db')).toEqual({ n: '7' });
    expect(early.get('postgrespolicy', 'team-b', 'orders')).toBeUndefined();
    await publish(
      nc,
      names,
      'postgrespolicy',
      'team-b',
      'orders',
      event('PostgresPolicy', 'team-b', 'orders', {}),
    );

    const late = await start(['secret', 'postgrespolicy']);
    await late.ready;
    expect(dataOf(late, 'secret', 'team-a', 'db')).toEqual({ n: '7' });
    expect(late.get('secret', 'team-a', 'gone')).toBeUndefined();
    expect(late.get('postgrespolicy', 'team-b', 'orders')?.kind).toBe('PostgresPolicy');
  });

  it('sync() is not held up by events of kinds it does not follow', async () => {
    await publish(
      nc,
      names,
      'ephemeralaccesspolicy',
      'team-d',
      'one',
      event('EphemeralAccessPolicy', 'team-d', 'one', {}),
    );
    for (let i = 0; i < 5; i++) {
      await publish(
        nc,
        names,
        'ephemeralaccessrequest',
        'team-d',
        `r${i}`,
        event('EphemeralAccessRequest', 'team-d', `r${i}`, {}),
      );
    }
    // Started after them: the server's position of a LastPerSubject consumer can sit past messages it
    // never delivers, so catching up is judged by deliveries, not stream sequences.
    const cache = await start(['ephemeralaccesspolicy']);
    await cache.ready;
    await cache.sync(2_000);
    for (let i = 5; i < 10; i++) {
      await publish(
        nc,
        names,
        'ephemeralaccessrequest',
        'team-d',
        `r${i}`,
        event('EphemeralAccessRequest', 'team-d', `r${i}`, {}),
      );
    }
    await cache.sync(2_000);
    expect(cache.get('ephemeralaccesspolicy', 'team-d', 'one')).toBeDefined();
  });

  it('sync() answers for a quiet kind after its pull request was renewed', async () => {
    // Each renewal of the consumer's pull request passes through the message iterator; a quiet kind sees
    // nothing else, so catching up must not depend on the iterator's own pending count.
    const cache = await ResourceCache.start(nc, {
      kinds: ['secret'],
      stream: names.stream,
      subjectRoot: names.root,
      logger,
      pullExpiresMs: 1_000,
    });
    caches.push(cache);
    await cache.ready;
    await publish(nc, names, 'secret', 'team-q', 'quiet', event('Secret', 'team-q', 'quiet', { k: 'dg==' }));
    await until(() => cache.get('secret', 'team-q', 'quiet'), 'the secret');
    await new Promise((r) => setTimeout(r, 2_500)); // two renewals, nothing else delivered
    // The stream moves on with a kind this cache does not follow.
    await publish(nc, names, 'configmap', 'team-q', 'noise', event('ConfigMap', 'team-q', 'noise', {}));
    await cache.sync(2_000);
    expect(dataOf(cache, 'secret', 'team-q', 'quiet')).toEqual({ k: 'dg==' });
  });

  it('keeps dotted, maximum-length and mixed names of every kind apart, and skips raw or malformed subjects', async () => {
    const kinds = [...RESOURCE_KINDS];
    const cache = await start(kinds);
    await cache.ready;
    const longest = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`;
    // `app.prod` and `app~prod`-looking names must not collide; `app.prod` and `app-prod` neither.
    const objectNames = [
      'app.prod',
      'app-prod',
      longest,
      'owner.cluster.credentials.postgresql.example.com',
      'x',
    ];
    const ns = 'team-names';
    for (const kind of kinds) {
      for (const name of objectNames) {
        await publish(nc, names, kind, ns, name, event(kind, ns, name, { name, kind }));
      }
    }
    await cache.sync();
    for (const kind of kinds) {
      expect(
        cache
          .list(kind, ns)
          .map((o) => o.metadata.name)
          .sort(),
      ).toEqual([...objectNames].sort());
      for (const name of objectNames) expect(dataOf(cache, kind, ns, name)).toEqual({ name, kind });
    }
    // A dotted name published raw (as before the encoding) has five name tokens, and a malformed escape
    // decodes to nothing: both are skipped with a warning, never filed under a wrong name.
    const js = jetstream(nc);
    const body = new TextEncoder().encode(JSON.stringify(event('secret', ns, 'raw.dotted', {})));
    await js.publish(`${names.root}.resource.secret.${ns}.raw.dotted`, body);
    await js.publish(`${names.root}.resource.secret.${ns}.bad%ZZ`, body);
    await cache.sync();
    expect(cache.list('secret', ns)).toHaveLength(objectNames.length);
    await cache.stop();
    // Every cache following secrets warns; two distinct subjects were skipped.
    const skipped = new Set(warnings.filter((w) => w.includes('unexpected subject') && w.includes(ns)));
    expect([...skipped].map((w) => w.split('.').at(-1))).toEqual(['dotted', 'bad%ZZ']);
  });

  it('skips invalid payloads with a warning that carries no payload value, and keeps going', async () => {
    const cache = await start(['postgrespolicyplan']);
    await cache.ready;
    await publish(nc, names, 'postgrespolicyplan', 'team-c', 'bad', '{not json s3cr3t');
    await publish(nc, names, 'postgrespolicyplan', 'team-c', 'bad2', {
      v: 1,
      type: 'upsert',
      object: { password: 's3cr3t' },
    });
    await publish(
      nc,
      names,
      'postgrespolicyplan',
      'team-c',
      'good',
      event('PostgresPolicyPlan', 'team-c', 'good', {}),
    );
    await until(() => cache.get('postgrespolicyplan', 'team-c', 'good'), 'the valid plan');
    expect(cache.get('postgrespolicyplan', 'team-c', 'bad')).toBeUndefined();
    expect(cache.get('postgrespolicyplan', 'team-c', 'bad2')).toBeUndefined();
    expect(warnings.filter((w) => w.includes('team-c.bad'))).toHaveLength(2);
    expect(warnings.join('\n')).not.toContain('s3cr3t');
  });
});

describe('ResourceCache across a broker restart', () => {
  let server: PrivateNatsServer;
  let nc: NatsConnection;
  const names: Names = { stream: 'RP_RESOURCES', root: 'rp' };

  beforeAll(async () => {
    server = await startPrivateNatsServer();
    nc = await connect({ servers: server.url, maxReconnectAttempts: -1, reconnectTimeWait: 100 });
    await createStream(nc, names);
  });

  afterAll(async () => {
    await nc.close();
    await server.dispose();
  });

  it('keeps following after the server comes back (defaults: RP_RESOURCES under rp)', async () => {
    const cache = await ResourceCache.start(nc, {
      kinds: ['secret'],
      logger: { warn: () => undefined, log: () => undefined },
    });
    try {
      await publish(nc, names, 'secret', 'ns', 'a', event('Secret', 'ns', 'a', { n: '1' }));
      await cache.ready;
      await until(() => cache.get('secret', 'ns', 'a'), 'before restart');

      await server.stop();
      await server.start();

      await until(
        async () => {
          await publish(nc, names, 'secret', 'ns', 'b', event('Secret', 'ns', 'b', { n: '2' })).catch(
            () => undefined,
          );
          return cache.get('secret', 'ns', 'b');
        },
        'an event published after the restart',
        30_000,
      );
      expect(dataOf(cache, 'secret', 'ns', 'a')).toEqual({ n: '1' });
    } finally {
      await cache.stop();
    }
  }, 60_000);
});
