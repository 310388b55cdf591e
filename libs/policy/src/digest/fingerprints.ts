// Small diagnostic digests: the password source-version map and the logical target fingerprint.
// Neither contains secrets: source versions are Secret names/keys/resourceVersions, the fingerprint never sees credentials.

import { canonicalJson } from './canonical-json.js';
import { sha256Digest } from './sha256.js';

/**
 * `passwordSourceDigest`: `sha256:` over canonical JSON of the role -> source-version map (keys sorted by code
 * point). Contains no password material; changes whenever any role's Secret version changes.
 *
 * @example passwordSourceDigest({ app: 'app-secret:password:7' })
 */
export function passwordSourceDigest(sources: Readonly<Record<string, string>>): string {
  return sha256Digest(canonicalJson(sources));
}

/**
 * `targetLogicalFingerprint`: `sha256:` + hex SHA-256 of `lower(host) NUL port NUL database`. Host case is
 * irrelevant to DNS; the database name is case-sensitive in PostgreSQL and kept as is.
 *
 * @example logicalFingerprint('DB.example', 5432, 'app')
 */
export function logicalFingerprint(host: string, port: number | string, database: string): string {
  return sha256Digest(`${host.toLowerCase()}\0${String(port)}\0${database}`);
}
