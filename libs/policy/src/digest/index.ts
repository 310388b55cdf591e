// Digest surface: canonical JSON and every `sha256:` identity the service stores (approval, content, sources, target).
// Each encoding carries its own tag; digests with different tags are never compared.
export { canonicalJson, type CanonicalJsonMemo } from './canonical-json.js';
export { sha256Digest } from './sha256.js';
export {
  changeDigest,
  changeDigestDocument,
  effectOf,
  ChangeDigestError,
  CHANGE_DIGEST_ENCODING,
  type ChangeDigest,
  type ChangeDigestInput,
} from './change-digest.js';
export {
  contentDigest,
  contentDigestDocument,
  pruneContent,
  CONTENT_DIGEST_ENCODING,
  type ContentDigest,
} from './content-digest.js';
export { CONTENT_API_DEFAULTS, withContentDefaults, type ContentDefault } from './content-defaults.js';
export { passwordSourceDigest, logicalFingerprint } from './fingerprints.js';
