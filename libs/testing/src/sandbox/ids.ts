// Unique, name-safe identifiers for per-test-file resources on the shared local servers.
// Random on purpose: two test files (or two CI runs) must never share a database, stream or key prefix.
import { randomBytes } from 'node:crypto';

/** A short lower-case id like `k3x9q2ab`, safe in database names, NATS tokens and Redis keys. */
export function sandboxId(): string {
  return randomBytes(5).toString('hex');
}
