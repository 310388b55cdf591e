// The membership bundle of an ephemeral access request and its hash: the identity an approval binds to
// (`resolvedAccess.bundleHash`, tagged `resolvedAccess.bundleEncoding`). Hashes with other tags never compare.

import { compareCodePoints } from '../canonical-order.js';
import { canonicalJson } from '../digest/canonical-json.js';
import { sha256Digest } from '../digest/sha256.js';

/** Encoding tag of `bundleHash`. Change the tag (never the pinned fixture) when the bytes change. */
export const BUNDLE_ENCODING = 'rolepolicy.io/ephemeral-membership-bundle/v1';

/** What a granted membership means in PostgreSQL: never ADMIN, SET left at the server default. */
export const MEMBERSHIP_SEMANTICS = 'postgres-membership-v1-admin-false-set-server-default';

/** One temporary membership: `member` (the request's subject) becomes a member of `role`. */
export interface BundleMembership {
  readonly role: string;
  readonly member: string;
  readonly inherit: boolean;
}

/** What the bundle hash covers. */
export interface BundleInput {
  /** `logicalFingerprint(host, port, database)` of the target policy's connection. */
  readonly targetDatabaseFingerprint: string;
  readonly memberships: readonly BundleMembership[];
}

/** Orders memberships by role, then member, then inherit (false first): the canonical order. */
export function compareBundleMemberships(a: BundleMembership, b: BundleMembership): number {
  return (
    compareCodePoints(a.role, b.role) ||
    compareCodePoints(a.member, b.member) ||
    Number(a.inherit) - Number(b.inherit)
  );
}

/** The memberships in canonical order, each reduced to its three fields. */
export function canonicalBundle(memberships: readonly BundleMembership[]): BundleMembership[] {
  return memberships
    .map(({ role, member, inherit }) => ({ role, member, inherit }))
    .sort(compareBundleMemberships);
}

/**
 * `sha256:` over canonical JSON of `{bundleEncoding, membershipSemantics, targetDatabaseFingerprint,
 * memberships}` with memberships in canonical order, so the hash does not depend on declaration order.
 *
 * @example bundleHash({ targetDatabaseFingerprint: 'sha256:ab…', memberships: [{ role: 'ro', member: 'alice', inherit: true }] })
 */
export function bundleHash(input: BundleInput): string {
  return sha256Digest(
    canonicalJson({
      bundleEncoding: BUNDLE_ENCODING,
      membershipSemantics: MEMBERSHIP_SEMANTICS,
      targetDatabaseFingerprint: input.targetDatabaseFingerprint,
      memberships: canonicalBundle(input.memberships),
    }),
  );
}

/** The fields of `status.resolvedAccess` the hash check reads. */
export interface ResolvedBundle extends BundleInput {
  readonly bundleEncoding: string;
  readonly bundleHash: string;
}

/** Whether a recorded snapshot is one this code wrote, or why not. */
export type BundleVerdict = { readonly ok: true } | { readonly ok: false; readonly message: string };

/**
 * Re-verifies a recorded `resolvedAccess`: known encoding, memberships stored in canonical order without
 * duplicates, and a hash equal to the one recomputed from the payload. Every step that acts on a request
 * calls it, so an edited or non-canonical snapshot authorizes nothing.
 */
export function verifyResolvedAccess(resolved: ResolvedBundle): BundleVerdict {
  if (resolved.bundleEncoding !== BUNDLE_ENCODING) {
    return {
      ok: false,
      message: `resolvedAccess.bundleEncoding ${JSON.stringify(resolved.bundleEncoding)} is not ${BUNDLE_ENCODING}`,
    };
  }
  const { memberships } = resolved;
  for (let i = 1; i < memberships.length; i += 1) {
    const previous = memberships[i - 1]!;
    const current = memberships[i]!;
    if (compareBundleMemberships(previous, current) >= 0) {
      return {
        ok: false,
        message: 'resolvedAccess.memberships are not in canonical order or repeat an entry',
      };
    }
    if (previous.role === current.role && previous.member === current.member) {
      return { ok: false, message: `resolvedAccess.memberships grant role ${current.role} twice` };
    }
  }
  if (bundleHash(resolved) !== resolved.bundleHash) {
    return { ok: false, message: 'resolvedAccess.bundleHash does not match its memberships and target' };
  }
  return { ok: true };
}
