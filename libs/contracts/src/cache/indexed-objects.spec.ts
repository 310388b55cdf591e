// The cache's indexes answer exactly what filtering every object would, after any sequence of writes
// (an object moving owner, a delete, a marker's clear). By uid: what finding the uid in the namespace's list
// answered before (ChangeKeys found a new plan's policy that way, one walk of the namespace per plan event).
// By field: what filtering the namespace's list on the field answered, in the same order (held access read
// every request of the namespace to find those resolved to one policy).
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

/** An EphemeralAccessRequest, resolved to the policy with uid `target` when there is one. */
const request = (namespace: string, name: string, target: string | undefined): CachedObject =>
  ({
    apiVersion: 'rolepolicy.io/v1alpha1',
    kind: 'EphemeralAccessRequest',
    metadata: { namespace, name, uid: `${namespace}-${name}` },
    spec: { accessPolicyRef: { name: 'ap' }, subject: { role: 'alice' } },
    status:
      target === undefined
        ? { phase: 'Pending' }
        : { phase: 'Active', resolvedAccess: { targetPolicyUid: target } },
  }) as unknown as CachedObject;

const targetOf = (o: CachedObject): string | undefined =>
  (o as { status?: { resolvedAccess?: { targetPolicyUid?: string } } }).status?.resolvedAccess
    ?.targetPolicyUid;

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
    objects.set('a/r1', request('a', 'r1', 'p1'));
    expect(names(objects.withField('targetPolicyUid', 'a', 'p1'))).toStrictEqual(['a/r1']);
    expect(objects.withField('targetPolicyUid', 'b', 'p1')).toStrictEqual([]);
    objects.set('a/r1', request('a', 'r1', 'p2'));
    expect(objects.withField('targetPolicyUid', 'a', 'p1')).toStrictEqual([]);
    objects.delete('a/r1');
    expect(objects.withField('targetPolicyUid', 'a', 'p2')).toStrictEqual([]);
  });

  test('the field index answers as filtering the namespace would, in its order, after any writes', () => {
    const op = fc.oneof(
      fc.record({
        kind: fc.constant('set' as const),
        namespace: fc.constantFrom('a', 'b'),
        name: fc.constantFrom('r1', 'r2', 'r3', 'r4'),
        // Sometimes unresolved (no snapshot, so in no policy's index), often moving between policies.
        target: fc.option(fc.constantFrom('p1', 'p2', 'p3'), { nil: undefined }),
      }),
      fc.record({
        kind: fc.constant('delete' as const),
        namespace: fc.constantFrom('a', 'b'),
        name: fc.constantFrom('r1', 'r2', 'r3', 'r4'),
      }),
      fc.record({ kind: fc.constant('clear' as const) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 40 }), (ops) => {
        const objects = new IndexedObjects(fieldReadersOf('ephemeralaccessrequest'));
        for (const o of ops) {
          if (o.kind === 'clear') objects.clear();
          else if (o.kind === 'delete') objects.delete(`${o.namespace}/${o.name}`);
          else objects.set(`${o.namespace}/${o.name}`, request(o.namespace, o.name, o.target));
        }
        for (const namespace of ['a', 'b'])
          for (const uid of ['p1', 'p2', 'p3'])
            // Strict: toEqual would take a dangling key's `undefined` entry for no entry at all.
            expect(objects.withField('targetPolicyUid', namespace, uid)).toStrictEqual(
              objects.inNamespace(namespace).filter((x) => targetOf(x) === uid),
            );
      }),
    );
  });
});
