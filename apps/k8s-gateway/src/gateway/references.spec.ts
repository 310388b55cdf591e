// The gateway publishes only the Secrets and ConfigMaps that rolepolicy.io objects name or own.
import {
  ownedByRolepolicy,
  referencedSecretNames,
  referencedSecrets,
  secretReadVerdict,
  SecretReferenceIndex,
} from './references.js';

test('connection secretRef, params Secret references and generated password Secrets are referenced', () => {
  const policy = {
    spec: {
      connection: {
        secretRef: { name: 'conn' },
        params: {
          host: 'db',
          passwordSecret: { name: 'pw', key: 'password' },
          usernameSecret: { name: 'user' },
        },
      },
      roles: [
        { name: 'app', password: { secretRef: { name: 'app-pw' } } },
        { name: 'svc', password: { generate: { secretName: 'svc-gen' } } },
      ],
    },
  };
  expect([...referencedSecretNames(policy)].sort()).toEqual(['app-pw', 'conn', 'pw', 'svc-gen', 'user']);
});

test('each reference reads the keys it names; a reference that names none reads every key (row 11)', () => {
  const keys = (object: unknown) =>
    Object.fromEntries(
      [...referencedSecrets(object)].map(([name, k]) => [name, k === 'all' ? 'all' : [...k].sort()]),
    );
  expect(
    keys({
      spec: {
        connection: {
          params: { hostSecret: { name: 'db', key: 'host' }, portSecret: { name: 'db', key: 'port' } },
        },
        roles: [
          { name: 'a', password: { secretRef: { name: 'pw' }, secretKey: 'a-key' } },
          { name: 'b', password: { secretRef: { name: 'pw-default' } } },
          { name: 'c', password: { generate: { secretName: 'gen' } } },
        ],
      },
    }),
  ).toEqual({ db: ['host', 'port'], pw: ['a-key'], 'pw-default': 'all', gen: 'all' });
  expect(keys({ spec: { connection: { secretRef: { name: 'url' } } } })).toEqual({ url: ['DATABASE_URL'] });
  expect(keys({ spec: { connection: { secretRef: { name: 'url' }, secretKey: 'URI' } } })).toEqual({
    url: ['URI'],
  });
  expect(keys({ spec: { target: { connectionRef: { secretName: 'preview', key: 'DSN' } } } })).toEqual({
    preview: ['DSN'],
  });
});

test('the index answers the union of the keys every object naming a Secret reads', () => {
  const index = new SecretReferenceIndex();
  const host = { spec: { connection: { params: { hostSecret: { name: 'db', key: 'host' } } } } };
  const port = { spec: { connection: { params: { portSecret: { name: 'db', key: 'port' } } } } };
  index.set('policy/ns/a', 'ns', host);
  expect(index.keysOf('ns', 'db')).toEqual(new Set(['host']));
  index.set('policy/ns/b', 'ns', port);
  expect(index.keysOf('ns', 'db')).toEqual(new Set(['host', 'port']));
  index.remove('policy/ns/a');
  expect(index.keysOf('ns', 'db')).toEqual(new Set(['port']));
  expect(index.keysOf('ns', 'nobody')).toEqual(new Set());
  const named = (_ns: string, name: string): boolean => index.has('ns', name);
  expect(
    secretReadVerdict('referenced', 'ns', 'db', {}, named, (ns, name) => index.keysOf(ns, name)),
  ).toEqual({ ok: true, keys: ['port'] });
});

test('an object without spec references nothing', () => {
  expect(referencedSecretNames({ metadata: { name: 'x' } }).size).toBe(0);
});

test('ownership by a rolepolicy.io kind is recognised from ownerReferences', () => {
  const owned = {
    metadata: { ownerReferences: [{ apiVersion: 'rolepolicy.io/v1alpha1', kind: 'PostgresPolicyPlan' }] },
  };
  const foreign = { metadata: { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment' }] } };
  expect(ownedByRolepolicy(owned)).toBe(true);
  expect(ownedByRolepolicy(foreign)).toBe(false);
  expect(ownedByRolepolicy({ metadata: {} })).toBe(false);
});

describe('SecretReferenceIndex', () => {
  const policy = (...names: string[]) => ({
    spec: {
      connection: { secretRef: { name: names[0] } },
      roles: names.slice(1).map((n) => ({ name: n, password: { secretRef: { name: n } } })),
    },
  });

  test('reports a Secret once when the first object names it, and keeps it while any object does', () => {
    const index = new SecretReferenceIndex();
    expect(index.set('policy/ns/a', 'ns', policy('conn', 'pw'))).toEqual(['ns/conn', 'ns/pw']);
    expect(index.set('policy/ns/b', 'ns', policy('conn'))).toEqual([]);
    expect(index.has('ns', 'conn')).toBe(true);
    index.remove('policy/ns/a');
    expect(index.has('ns', 'conn')).toBe(true); // b still names it
    expect(index.has('ns', 'pw')).toBe(false);
    index.remove('policy/ns/b');
    expect(index.has('ns', 'conn')).toBe(false);
  });

  test('an update moves references: the old Secret is released, the new one reported', () => {
    const index = new SecretReferenceIndex();
    index.set('policy/ns/a', 'ns', policy('old'));
    expect(index.set('policy/ns/a', 'ns', policy('new'))).toEqual(['ns/new']);
    expect(index.has('ns', 'old')).toBe(false);
    expect(index.set('policy/ns/a', 'ns', policy('new'))).toEqual([]); // unchanged: nothing new
    expect(index.has('other', 'new')).toBe(false); // namespaced
  });

  test('agrees with a recomputation from scratch after any sequence of changes', () => {
    const index = new SecretReferenceIndex();
    const live = new Map<string, ReturnType<typeof policy>>();
    const names = ['s0', 's1', 's2', 's3'];
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
    for (let step = 0; step < 500; step++) {
      const key = `policy/ns/p${next() % 5}`;
      if (next() % 4 === 0) {
        index.remove(key);
        live.delete(key);
      } else {
        const object = policy(names[next() % 4]!, ...names.filter(() => next() % 2 === 0));
        index.set(key, 'ns', object);
        live.set(key, object);
      }
      const expected = new Set([...live.values()].flatMap((o) => [...referencedSecretNames(o)]));
      for (const name of names) expect(index.has('ns', name)).toBe(expected.has(name));
    }
  });
});

describe('secretReadVerdict: which Secrets the gateway hands out (SECRET_READ_POLICY, ADR 0018)', () => {
  const named = (_ns: string, name: string): boolean => name === 'conn';
  const plain = { metadata: { name: 'conn' } };
  const labelled = { metadata: { name: 'conn', labels: { 'rolepolicy.io/readable': 'true' } } };
  const owned = {
    metadata: { name: 'gen', ownerReferences: [{ apiVersion: 'rolepolicy.io/v1alpha1', uid: 'u' }] },
  };

  test('referenced: any Secret a rolepolicy.io object names, labelled or not', () => {
    expect(secretReadVerdict('referenced', 'team', 'conn', plain, named)).toEqual({ ok: true });
    expect(secretReadVerdict('referenced', 'team', 'other', plain, named)).toMatchObject({
      ok: false,
      reason: 'NotReferenced',
    });
  });

  test('labelled: a named Secret without the label is refused naming the Secret, the label and the rule', () => {
    expect(secretReadVerdict('labelled', 'team', 'conn', plain, named)).toEqual({
      ok: false,
      reason: 'NotLabelled',
      message:
        'Secret team/conn is not labelled rolepolicy.io/readable: "true"; this installation reads only ' +
        'Secrets labelled for rolepolicy (SECRET_READ_POLICY=labelled): label the Secret to let rolepolicy use it',
    });
    expect(secretReadVerdict('labelled', 'team', 'conn', labelled, named)).toEqual({ ok: true });
    const wrongValue = { metadata: { labels: { 'rolepolicy.io/readable': 'yes' } } };
    expect(secretReadVerdict('labelled', 'team', 'conn', wrongValue, named).ok).toBe(false);
  });

  test('labelled: the label does not make an unnamed Secret readable; Secrets rolepolicy owns need no label', () => {
    expect(secretReadVerdict('labelled', 'team', 'other', labelled, named)).toMatchObject({
      reason: 'NotReferenced',
    });
    expect(secretReadVerdict('labelled', 'team', 'gen', owned, named)).toEqual({ ok: true });
  });
});
