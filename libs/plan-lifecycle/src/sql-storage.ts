// Where a plan's redacted SQL preview lives: inline below 16 KiB, else a gzip ConfigMap, else a truncated
// inline preview flagged `sqlTruncated`. Pure (gzip is computation); the gateway writes the ConfigMap.

import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';

/**
 * Redacted SQL up to 16 KiB stays in `status.sqlInline`: small enough that `kubectl get -o yaml` stays
 * readable and a plan object stays far below etcd's 1.5 MiB request limit.
 */
export const SQL_INLINE_MAX_BYTES = 16 * 1024;
/**
 * Compressed SQL up to 768 KiB goes to a ConfigMap: the API server caps ConfigMap payloads at 1 MiB,
 * and binaryData travels base64-encoded (x4/3 = 1 MiB on the wire), leaving room for metadata.
 */
export const SQL_CONFIGMAP_MAX_GZIP_BYTES = 768 * 1024;
/**
 * gzip that fits `maxBytes` if any level can: level 4 first (about 5x cheaper than 9 on plan SQL and
 * review JSON, some 10% larger: the planner compressed every plan's artifact at level 9, a fleet's
 * largest single cost), level 9 only when the faster output does not fit.
 */
export function gzipFitting(bytes: Buffer, maxBytes: number): Buffer {
  const fast = gzipSync(bytes, { level: 4 });
  return fast.length <= maxBytes ? fast : gzipSync(bytes, { level: 9 });
}

/** Key of the gzip payload inside the ConfigMap's binaryData. */
export const SQL_CONFIGMAP_KEY = 'plan.sql.gz';
/** Appended to a truncated inline preview so no reader mistakes it for the whole plan. */
export const SQL_TRUNCATION_MARKER = '\n-- truncated: the full SQL exceeds what can be stored on the plan\n';

/** How the preview is stored. */
export type SqlStorage =
  | { readonly kind: 'inline'; readonly sqlInline: string }
  | { readonly kind: 'configmap'; readonly key: string; readonly gzipBase64: string }
  | { readonly kind: 'truncated'; readonly sqlInline: string };

/** Storage decision plus the byte counts and hash recorded on the plan. */
export interface StoredSql {
  readonly storage: SqlStorage;
  /** Hex SHA-256 of the full redacted preview bytes (storage integrity only). */
  readonly redactedSqlHash: string;
  /** UTF-8 bytes of the full redacted preview. */
  readonly sqlOriginalBytes: number;
  /** Bytes actually stored (inline text, gzip payload, or truncated text). */
  readonly sqlStoredBytes: number;
  readonly sqlTruncated: boolean;
}

/** Hex SHA-256 of a string's UTF-8 bytes. */
export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** Cuts UTF-8 bytes to at most `max`, backing off so no multi-byte character is split. */
export function truncateUtf8(text: string, max: number): string {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= max) return text;
  let end = max;
  // Continuation bytes look like 10xxxxxx: step back to the start of the character.
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end -= 1;
  return bytes.subarray(0, end).toString('utf8');
}

/**
 * Chooses the storage for a redacted SQL preview. Thresholds are parameters so tests can exercise
 * every branch without megabytes of SQL; production uses the exported defaults.
 */
export function storeSql(
  redactedSql: string,
  limits: { readonly inlineMaxBytes: number; readonly configMapMaxGzipBytes: number } = {
    inlineMaxBytes: SQL_INLINE_MAX_BYTES,
    configMapMaxGzipBytes: SQL_CONFIGMAP_MAX_GZIP_BYTES,
  },
): StoredSql {
  const original = Buffer.byteLength(redactedSql, 'utf8');
  const redactedSqlHash = sha256Hex(redactedSql);
  if (original <= limits.inlineMaxBytes) {
    return {
      storage: { kind: 'inline', sqlInline: redactedSql },
      redactedSqlHash,
      sqlOriginalBytes: original,
      sqlStoredBytes: original,
      sqlTruncated: false,
    };
  }
  const gz = gzipFitting(Buffer.from(redactedSql, 'utf8'), limits.configMapMaxGzipBytes);
  if (gz.length <= limits.configMapMaxGzipBytes) {
    return {
      storage: { kind: 'configmap', key: SQL_CONFIGMAP_KEY, gzipBase64: gz.toString('base64') },
      redactedSqlHash,
      sqlOriginalBytes: original,
      sqlStoredBytes: gz.length,
      sqlTruncated: false,
    };
  }
  const markerBytes = Buffer.byteLength(SQL_TRUNCATION_MARKER, 'utf8');
  const head = truncateUtf8(redactedSql, Math.max(0, limits.inlineMaxBytes - markerBytes));
  const sqlInline = `${head}${SQL_TRUNCATION_MARKER}`;
  return {
    storage: { kind: 'truncated', sqlInline },
    redactedSqlHash,
    sqlOriginalBytes: original,
    sqlStoredBytes: Buffer.byteLength(sqlInline, 'utf8'),
    sqlTruncated: true,
  };
}
