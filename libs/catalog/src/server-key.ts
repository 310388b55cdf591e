// The PostgreSQL server a connection points at, as the key of per-server limits (the executor's
// EXECUTOR_SERVER_CONCURRENCY, the inspector's INSPECT_SERVER_SESSIONS): `host:port`, known before any session opens.
// Aliases of one server (a DNS name and an IP, a pooler in front) get different keys and each their own
// slots; the system identifier would tell them apart, but only after connecting, which is what the bound is for.
import { targetOfUrl, type ConnectionSpec } from './connection.js';

/** `host:port` (host lower-cased, port 5432 when not given) of the server `spec` connects to. */
export function serverKey(spec: ConnectionSpec): string {
  if ('url' in spec) {
    try {
      const { host, port } = targetOfUrl(spec.url);
      return `${host.toLowerCase()}:${port}`;
    } catch {
      // openConnection refuses it with the same error inside the slot; the key only has to be stable.
      return 'invalid-url';
    }
  }
  return `${spec.params.host.toLowerCase()}:${spec.params.port ?? 5432}`;
}
