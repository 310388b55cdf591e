// The fields the ResourceCache indexes per kind, beyond namespace, owner and uid: each answers "the objects
// of this namespace whose field is X" without walking the namespace. The ephemeral bench (1,000 requests
// over 50 target policies in one namespace) spent its revocation window listing every request of the
// namespace for each policy's held access and each revoke's other holders: O(requests) per pass, O(n^2)
// over a burst (issue 28). Only a request resolved to the policy can hold access on it, so those readers
// ask by `targetPolicyUid` instead.
import type { ResourceKindToken } from '../subjects.js';
import type { Cached } from './cached-kinds.js';
import type { FieldReaders } from './indexed-objects.js';

/** Reads one field of an object; undefined (or not a string) leaves the object out of that field's index. */
type FieldReader<K extends ResourceKindToken> = (object: Cached<K>) => unknown;

/** The indexed fields of each kind, by name. */
export const INDEXED_FIELDS = {
  ephemeralaccessrequest: {
    /** `status.resolvedAccess.targetPolicyUid`: the requests that may hold access on a PostgresPolicy. */
    targetPolicyUid: (r) => r.status?.resolvedAccess?.targetPolicyUid,
    /** `spec.accessPolicyRef.name` and `status.resolvedAccess.accessPolicyUid`: an access policy's requests. */
    accessPolicyName: (r) => r.spec?.accessPolicyRef?.name,
    accessPolicyUid: (r) => r.status?.resolvedAccess?.accessPolicyUid,
  },
} as const satisfies { readonly [K in ResourceKindToken]?: Readonly<Record<string, FieldReader<K>>> };

/** The kinds with indexed fields. */
export type IndexedKind = keyof typeof INDEXED_FIELDS;

/** The indexed fields of kind `K`. */
export type IndexedField<K extends IndexedKind> = keyof (typeof INDEXED_FIELDS)[K] & string;

/** Values wanted of some indexed fields of kind `K` (undefined: that field matches nothing). */
export type FieldValues<K extends IndexedKind> = { readonly [F in IndexedField<K>]?: string | undefined };

/** A kind's field readers over untyped objects, as {@link IndexedObjects} calls them (none for most kinds). */
export function fieldReadersOf(kind: ResourceKindToken): FieldReaders {
  return ((INDEXED_FIELDS as Partial<Record<ResourceKindToken, unknown>>)[kind] ?? {}) as FieldReaders;
}
