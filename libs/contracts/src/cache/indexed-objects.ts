// The resource cache's objects of one kind, by `<namespace>/<name>`, with three indexes kept on every change:
// by namespace, by owner uid (any ownerReference) and by the object's own uid. A planner pass needs the plans
// of one policy, not every plan of the cluster: listing and filtering the whole kind made each pass grow with
// the fleet (planner-scale bench: 7.5 ms a pass at 500 policies, 24.6 at 5,000); a new plan names its policy by
// uid, and finding it by listing the namespace's policies made every plan event grow with the fleet too.
// Besides, any fields of the kind named at construction (indexed-fields.ts), per namespace.
import type { CachedObject } from './cache-types.js';

/** Reads a field of an object: a string files it under that value, anything else leaves it out. */
export type FieldReaders = Readonly<Record<string, (object: CachedObject) => unknown>>;

const uidOf = (object: CachedObject): string | undefined => {
  const uid = (object.metadata as { uid?: unknown }).uid;
  return typeof uid === 'string' ? uid : undefined;
};

const ownerUids = (object: CachedObject): readonly string[] =>
  ((object.metadata as { ownerReferences?: readonly { uid?: unknown }[] }).ownerReferences ?? [])
    .map((ref) => ref.uid)
    .filter((uid): uid is string => typeof uid === 'string');

/** The key of a field's value in one namespace (names and namespaces hold no NUL). */
const fieldKey = (field: string, namespace: string, value: string): string =>
  `${field}\u0000${namespace}\u0000${value}`;

/**
 * A Map of one kind's objects that also answers by namespace, by owner, by uid and by the named fields; the
 * indexes follow every write.
 */
export class IndexedObjects extends Map<string, CachedObject> {
  private readonly namespaces = new Map<string, Set<string>>();
  private readonly owners = new Map<string, Set<string>>();
  /** A set per uid, not one key: the index must stay right even if two names ever showed one uid. */
  private readonly uids = new Map<string, Set<string>>();
  /** By {@link fieldKey}: the keys of a namespace's objects whose field has that value. */
  private readonly fieldValues = new Map<string, Set<string>>();
  /** When each key was last written (a count of writes): orders a union of field indexes as the namespace's. */
  private readonly written = new Map<string, number>();
  private writes = 0;

  /** `fields`: the fields to index by (read on every write, so keep them cheap). */
  constructor(private readonly fields: FieldReaders = {}) {
    super();
  }

  override set(key: string, object: CachedObject): this {
    this.unindex(key);
    super.set(key, object);
    addTo(this.namespaces, object.metadata.namespace, key);
    for (const uid of ownerUids(object)) addTo(this.owners, uid, key);
    const uid = uidOf(object);
    if (uid !== undefined) addTo(this.uids, uid, key);
    for (const k of this.fieldKeys(object)) addTo(this.fieldValues, k, key);
    this.written.set(key, ++this.writes);
    return this;
  }

  override delete(key: string): boolean {
    this.unindex(key);
    return super.delete(key);
  }

  override clear(): void {
    super.clear();
    this.namespaces.clear();
    this.owners.clear();
    this.uids.clear();
    this.fieldValues.clear();
    this.written.clear();
  }

  /** The objects of one namespace. */
  inNamespace(namespace: string): CachedObject[] {
    return this.resolve(this.namespaces.get(namespace));
  }

  /** The objects an ownerReference with this uid names (in any namespace: uids are unique). */
  ownedBy(uid: string): CachedObject[] {
    return this.resolve(this.owners.get(uid));
  }

  /**
   * The object of `namespace` whose own uid this is, as `inNamespace(namespace).find` by uid would answer
   * (both indexes keep keys in the order they were last written, so the first match is the same one).
   */
  withUid(uid: string, namespace: string): CachedObject | undefined {
    for (const key of this.uids.get(uid) ?? []) {
      const object = this.get(key)!;
      if (object.metadata.namespace === namespace) return object;
    }
    return undefined;
  }

  /**
   * The objects of `namespace` one of whose fields has the value `wanted` gives it (fields given undefined
   * match nothing), as `inNamespace(namespace).filter` on those fields would answer, in the same order: each
   * index keeps keys in the order they were last written, and a union is sorted by that order.
   */
  withFields(namespace: string, wanted: Readonly<Record<string, string | undefined>>): CachedObject[] {
    const sets: ReadonlySet<string>[] = [];
    for (const [field, value] of Object.entries(wanted)) {
      const keys = value === undefined ? undefined : this.fieldValues.get(fieldKey(field, namespace, value));
      if (keys !== undefined) sets.push(keys);
    }
    if (sets.length <= 1) return this.resolve(sets[0]);
    const union = new Set(sets.flatMap((keys) => [...keys]));
    return [...union].sort((a, b) => this.written.get(a)! - this.written.get(b)!).map((k) => this.get(k)!);
  }

  private fieldKeys(object: CachedObject): string[] {
    const keys: string[] = [];
    for (const [field, read] of Object.entries(this.fields)) {
      const value = read(object);
      if (typeof value === 'string') keys.push(fieldKey(field, object.metadata.namespace, value));
    }
    return keys;
  }

  private resolve(keys: ReadonlySet<string> | undefined): CachedObject[] {
    return keys === undefined ? [] : [...keys].map((k) => this.get(k)!);
  }

  private unindex(key: string): void {
    const old = this.get(key);
    if (old === undefined) return;
    removeFrom(this.namespaces, old.metadata.namespace, key);
    for (const uid of ownerUids(old)) removeFrom(this.owners, uid, key);
    const uid = uidOf(old);
    if (uid !== undefined) removeFrom(this.uids, uid, key);
    for (const k of this.fieldKeys(old)) removeFrom(this.fieldValues, k, key);
    this.written.delete(key);
  }
}

function addTo(index: Map<string, Set<string>>, value: string, key: string): void {
  let keys = index.get(value);
  if (keys === undefined) index.set(value, (keys = new Set()));
  keys.add(key);
}

function removeFrom(index: Map<string, Set<string>>, value: string, key: string): void {
  const keys = index.get(value);
  if (keys === undefined) return;
  keys.delete(key);
  if (keys.size === 0) index.delete(value);
}
