// The cache's indexes answer exactly what filtering every object would, after any sequence of writes
// (an object moving owner, a delete, a marker's clear). By uid: what finding the uid in the namespace's list
// answered before (ChangeKeys found a new plan's policy that way, one walk of the namespace per plan event).
// By fields: what filtering the namespace's list on them answered, in the same order (held access read every
// request of the namespace to find those resolved to one policy; the access-scheduler, an access policy's).
import fc from 'fast-check';

import type { CachedObject } from './cache-types.js';
import { fieldReadersOf } from './indexed-fields.js';
import { IndexedObjects } from './indexed-objects.js';

const object = (
  namespace: string,
  name: string,
  owners: readonly string[],
  uid: string | undefined = `${namespace}-${name}`,
): CachedObject =>
  ({
    apiVersion: 'rolepolicy.io/v1alpha1',
    kind: 'PostgresPolicyPlan',
    metadata: {
      namespace,
      name,
      ...(uid === undefined ? {} : { uid }),
      ownerReferences: owners.map((uid) => ({ apiVersion: 'v1', kind: 'PostgresPolicy', name: uid, uid })),
    },
  }) as unknown as CachedObject;

/** The fields of an EphemeralAccessRequest the cache indexes (a snapshot only when it resolved to a target). */
interface RequestFields {
  readonly target: string | undefined;
  readonly accessPolicy: string;
  readonly accessPolicyUid: string | undefined;
}

const request = (namespace: string, name: string, fields: RequestFields): CachedObject =>
  ({
    apiVersion: 'rolepolicy.io/v1alpha1',
    kind: 'EphemeralAccessRequest',
    metadata: { namespace, name, uid: `${namespace}-${name}` },
    spec: { accessPolicyRef: { name: fields.accessPolicy }, subject: { role: 'alice' } },
    status:
      fields.target === undefined
        ? { phase: 'Pending' }
        : {
            phase: 'Active',
            resolvedAccess: {
              targetPolicyUid: fields.target,
              ...(fields.accessPolicyUid === undefined ? {} : { accessPolicyUid: fields.accessPolicyUid }),
            },
          },
  }) as unknown as CachedObject;

/** What filtering on the indexed fields reads, straight from the object. */
const fieldsOf = (o: CachedObject): Record<string, string | undefined> => {
  const r = o as unknown as {
    spec: { accessPolicyRef: { name: string } };
    status?: { resolvedAccess?: { targetPolicyUid?: string; accessPolicyUid?: string } };
  };
  return {
    targetPolicyUid: r.status?.resolvedAccess?.targetPolicyUid,
    accessPolicyName: r.spec.accessPolicyRef.name,
    accessPolicyUid: r.status?.resolvedAccess?.accessPolicyUid,
  };
};

const owned = (o: CachedObject): readonly string[] =>
  ((o.metadata as { ownerReferences?: { uid: string }[] }).ownerReferences ?? []).map((r) => r.uid);
const names = (objects: readonly CachedObject[]): string[] =>
  objects.map((o) => `${o.metadata.namespace}/${o.metadata.name}`).sort();

describe('IndexedObjects', () => {
  test('a replaced object leaves its old namespace and owner', () => {
    const objects = new IndexedObjects();
    objects.set('a/p1', object('a', 'p1', ['u1']));
    objects.set('a/p1', object('a', 'p1', ['u2']));
    expect(objects.ownedBy('u1')).toEqual([]);
    expect(names(objects.ownedBy('u2'))).toEqual(['a/p1']);
    objects.delete('a/p1');
    expect(objects.ownedBy('u2')).toEqual([]);
    expect(objects.inNamespace('a')).toEqual([]);
  });

  test('an object is found by its uid in its own namespace only, and not once it is gone', () => {
    const objects = new IndexedObjects();
    objects.set('a/p1', object('a', 'p1', [], 'x'));
    expect(objects.withUid('x', 'a')?.metadata.name).toBe('p1');
    expect(objects.withUid('x', 'b')).toBeUndefined();
    objects.set('a/p1', object('a', 'p1', [], 'y'));
    expect(objects.withUid('x', 'a')).toBeUndefined();
    objects.delete('a/p1');
    expect(objects.withUid('y', 'a')).toBeUndefined();
  });

  test('answers as filtering every object would, after any writes', () => {
    const op = fc.oneof(
      fc.record({
        kind: fc.constant('set' as const),
        namespace: fc.constantFrom('a', 'b'),
        name: fc.constantFrom('p1', 'p2', 'p3'),
        owners: fc.uniqueArray(fc.constantFrom('u1', 'u2', 'u3'), { maxLength: 2 }),
        // Few uids, shared across names and namespaces, and sometimes none: the oracle's first match counts.
        uid: fc.option(fc.constantFrom('u1', 'u2', 'u3', 'u4'), { nil: undefined }),
      }),
      fc.record({
        kind: fc.constant('delete' as const),
        namespace: fc.constantFrom('a', 'b'),
        name: fc.constantFrom('p1', 'p2', 'p3'),
      }),
      fc.record({ kind: fc.constant('clear' as const) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 30 }), (ops) => {
        const objects = new IndexedObjects();
        for (const o of ops) {
          if (o.kind === 'clear') objects.clear();
          else if (o.kind === 'delete') objects.delete(`${o.namespace}/${o.name}`);
          else objects.set(`${o.namespace}/${o.name}`, object(o.namespace, o.name, o.owners, o.uid));
        }
        const all = [...objects.values()];
        for (const namespace of ['a', 'b'])
          expect(names(objects.inNamespace(namespace))).toEqual(
            names(all.filter((x) => x.metadata.namespace === namespace)),
          );
        for (const uid of ['u1', 'u2', 'u3'])
          expect(names(objects.ownedBy(uid))).toEqual(names(all.filter((x) => owned(x).includes(uid))));
        for (const namespace of ['a', 'b'])
          for (const uid of ['u1', 'u2', 'u3', 'u4'])
            expect(objects.withUid(uid, namespace)).toBe(
              objects.inNamespace(namespace).find((x) => (x.metadata as { uid?: string }).uid === uid),
            );
      }),
    );
  });

  test('a request is found by its target policy uid in its namespace only, and not once it moved or is gone', () => {
    const objects = new IndexedObjects(fieldReadersOf('ephemeralaccessrequest'));
    const fields = { accessPolicy: 'ap', accessPolicyUid: 'ap-uid' };
    objects.set('a/r1', request('a', 'r1', { ...fields, target: 'p1' }));
    expect(names(objects.withFields('a', { targetPolicyUid: 'p1' }))).toStrictEqual(['a/r1']);
    expect(objects.withFields('b', { targetPolicyUid: 'p1' })).toStrictEqual([]);
    objects.set('a/r1', request('a', 'r1', { ...fields, target: 'p2' }));
    expect(objects.withFields('a', { targetPolicyUid: 'p1' })).toStrictEqual([]);
    objects.delete('a/r1');
    expect(objects.withFields('a', { targetPolicyUid: 'p2' })).toStrictEqual([]);
  });

  test('several fields answer the union once, in the namespace order', () => {
    const objects = new IndexedObjects(fieldReadersOf('ephemeralaccessrequest'));
    objects.set('a/r1', request('a', 'r1', { target: 'p1', accessPolicy: 'ap', accessPolicyUid: 'ap-uid' }));
    objects.set(
      'a/r2',
      request('a', 'r2', { target: 'p1', accessPolicy: 'other', accessPolicyUid: 'ap-uid' }),
    );
    objects.set(
      'a/r3',
      request('a', 'r3', { target: undefined, accessPolicy: 'ap', accessPolicyUid: undefined }),
    );
    objects.set('a/r1', request('a', 'r1', { target: 'p1', accessPolicy: 'ap', accessPolicyUid: 'ap-uid' }));
    const both = objects.withFields('a', { accessPolicyName: 'ap', accessPolicyUid: 'ap-uid' });
    expect(both.map((o) => o.metadata.name)).toStrictEqual(['r2', 'r3', 'r1']);
    expect(objects.withFields('a', { accessPolicyName: 'ap', accessPolicyUid: undefined })).toHaveLength(2);
  });

  test('the field indexes answer as filtering the namespace would, in its order, after any writes', () => {
    const op = fc.oneof(
      fc.record({
        kind: fc.constant('set' as const),
        namespace: fc.constantFrom('a', 'b'),
        name: fc.constantFrom('r1', 'r2', 'r3', 'r4'),
        // Sometimes unresolved (no snapshot, so in no policy's index), often moving between policies.
        target: fc.option(fc.constantFrom('p1', 'p2', 'p3'), { nil: undefined }),
        accessPolicy: fc.constantFrom('ap1', 'ap2'),
        accessPolicyUid: fc.option(fc.constantFrom('u1', 'u2'), { nil: undefined }),
      }),
      fc.record({
        kind: fc.constant('delete' as const),
        namespace: fc.constantFrom('a', 'b'),
        name: fc.constantFrom('r1', 'r2', 'r3', 'r4'),
      }),
      fc.record({ kind: fc.constant('clear' as const) }),
    );
    // Every question a reader asks: one field, or an access policy's requests by its name or uid (the uid
    // maybe unknown). All of them after each sequence: a random few let a stale entry slip by in some runs.
    const asked: Record<string, string | undefined>[] = [
      ...['p1', 'p2', 'p3'].map((targetPolicyUid) => ({ targetPolicyUid })),
      ...['ap1', 'ap2', 'ap3'].flatMap((accessPolicyName) =>
        ['u1', 'u2', undefined].map((accessPolicyUid) => ({ accessPolicyName, accessPolicyUid })),
      ),
      ...['u1', 'u2'].map((accessPolicyUid) => ({ accessPolicyUid })),
    ];
    fc.assert(
      fc.property(fc.array(op, { maxLength: 40 }), (ops) => {
        const objects = new IndexedObjects(fieldReadersOf('ephemeralaccessrequest'));
        for (const o of ops) {
          if (o.kind === 'clear') objects.clear();
          else if (o.kind === 'delete') objects.delete(`${o.namespace}/${o.name}`);
          else objects.set(`${o.namespace}/${o.name}`, request(o.namespace, o.name, o));
        }
        for (const namespace of ['a', 'b'])
          for (const wanted of asked) {
            const matches = (x: CachedObject): boolean =>
              Object.entries(wanted).some(([f, v]) => v !== undefined && fieldsOf(x)[f] === v);
            // Strict: toEqual would take a dangling key's `undefined` entry for no entry at all.
            expect(objects.withFields(namespace, wanted)).toStrictEqual(
              objects.inNamespace(namespace).filter(matches),
            );
          }
      }),
    );
  });
});
