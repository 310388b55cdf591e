// Content digest of policy content (policy `content_digest`, candidate `contentDigest`): promotion is recognised
// by equal digests. The policy CRD's API defaults are filled on both sides, then nulls and empties are dropped
// (ADR 0007), so a candidate written exactly like its policy digests equally with the stored, defaulted policy.

import { CONTENT_FIELDS } from '../model/content.js';
import { canonicalJson } from './canonical-json.js';
import { withContentDefaults } from './content-defaults.js';
import { sha256Digest } from './sha256.js';

/** Encoding tag of `contentDigest`. Change the tag (never the pinned fixture) when the bytes change. */
export const CONTENT_DIGEST_ENCODING = 'rolepolicy.io/policy-content/v2';

/** A content digest and the tag of the bytes it hashes. */
export interface ContentDigest {
  readonly digest: string;
  readonly encoding: string;
}

function isEmpty(value: unknown): boolean {
  if (value === null || value === undefined) return true;
  if (Array.isArray(value)) return value.length === 0;
  return typeof value === 'object' && Object.keys(value).length === 0;
}

/**
 * Canonicalises children first, then drops object members that are null, undefined, `[]` or `{}` (so an
 * object that empties out vanishes from its parent). Array elements stay in place, `{}` included: list order
 * and positions are content.
 */
export function pruneContent(value: unknown): unknown {
  if (Array.isArray(value)) return value.map((item) => (item === undefined ? null : pruneContent(item)));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, child] of Object.entries(value)) {
      const pruned = pruneContent(child);
      if (!isEmpty(pruned)) out[key] = pruned;
    }
    return out;
  }
  return value;
}

/** The exact bytes `contentDigest` hashes (exported so fixtures can pin them). */
export function contentDigestDocument(content: unknown): string {
  if (content === null || typeof content !== 'object' || Array.isArray(content)) {
    throw new TypeError('policy content must be an object');
  }
  const record = content as Readonly<Record<string, unknown>>;
  const projected: Record<string, unknown> = {};
  for (const field of CONTENT_FIELDS) projected[field] = record[field];
  return canonicalJson({
    content: pruneContent(withContentDefaults(projected)),
    encoding: CONTENT_DIGEST_ENCODING,
  });
}

/**
 * `content_digest` / `contentDigest`: `sha256:<hex>` over canonical `{"content":…,"encoding":<tag>}`. Only the
 * content fields of `content` are read (a policy spec's other fields never count), so a byte-for-byte promoted
 * candidate and its policy digest equally. The policy CRD's API defaults are filled first (`reconciliation_mode`
 * omitted = `authoritative`), because the API server stores them on the policy and never on the candidate.
 */
export function contentDigest(content: unknown): ContentDigest {
  return { digest: sha256Digest(contentDigestDocument(content)), encoding: CONTENT_DIGEST_ENCODING };
}
