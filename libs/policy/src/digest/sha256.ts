// `sha256:<hex>`: the one digest string format (content digests, change digests, fingerprints).
// Hashes UTF-8 bytes; lowercase hex.

import { createHash } from 'node:crypto';

/** `sha256:` + lowercase hex SHA-256 of the UTF-8 bytes of `text`. */
export function sha256Digest(text: string): string {
  return `sha256:${createHash('sha256').update(text, 'utf8').digest('hex')}`;
}
