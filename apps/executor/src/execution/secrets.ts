// Where the executor gets what must never travel in an execution request: the target connection and
// the cleartext of each password source version. Production reads the cluster (cluster-view.ts); tests inject one.
import { SafeError, type ConnectionSpec } from '@rolepolicy/catalog';

/** A connection and the digest target reference it was resolved from (they differ from the request's when the policy's connection was edited). */
export interface ResolvedTarget {
  readonly connection: ConnectionSpec;
  readonly target: string;
}

/** Resolves secrets for one request; implementations must never log what they return. */
export interface ExecutionSecretResolver {
  /**
   * The connection for a request on `target` (the digest's target reference) in `namespace`, made for
   * `policy` (a resolver reading the cluster resolves the policy's current `spec.connection`).
   */
  connection(query: {
    readonly namespace: string;
    readonly target: string;
    readonly policy: string;
  }): Promise<ResolvedTarget>;
  /** The cleartext of `role`'s password at exactly `sourceVersion`; throws when that version is not readable. */
  password(query: {
    readonly namespace: string;
    readonly role: string;
    readonly sourceVersion: string;
  }): Promise<string>;
  /**
   * For a source version `<secret>:<key>:missing` of an approved plan: has the gateway create the generated
   * password's Secret (create-only, owned by the policy) and returns its cleartext and the real source
   * version. A Secret that exists already is used only when the policy controls it (PasswordSourceChangedError
   * otherwise). Absent in resolvers that cannot create Secrets.
   */
  generated?(query: {
    readonly namespace: string;
    readonly role: string;
    readonly sourceVersion: string;
    readonly policy: { readonly name: string; readonly uid: string };
    readonly length: number;
  }): Promise<{ readonly password: string; readonly sourceVersion: string }>;
}

/**
 * Raised when a secret cannot be resolved; the message names references, never values (a SafeError,
 * so the catalog's redaction passes it through with its type).
 */
export class SecretUnavailableError extends SafeError {
  override readonly name = 'SecretUnavailableError';
}

/**
 * Raised when a Secret read got no answer (no gateway in time, the Kubernetes API down or slow, a leader
 * changing): retried by redelivery; only the last delivery fails the plan with `SecretUnavailable`.
 */
export class SecretReadUnavailableError extends SafeError {
  override readonly name = 'SecretReadUnavailableError';
}

/**
 * Raised when a password Secret moved past the version the digest bound (rotated after planning): the
 * request is superseded and the planner plans the new version.
 */
export class PasswordSourceChangedError extends SafeError {
  override readonly name = 'PasswordSourceChangedError';
}

/** The plan or its decision has not reached the executor's view yet; retried by redelivery. */
export class PlanNotVisibleError extends SafeError {
  override readonly name = 'PlanNotVisibleError';
}

/** Raised when the policy's connection is not usable as written (the message names fields, never values). */
export class InvalidConnectionError extends SafeError {
  override readonly name = 'InvalidConnectionError';
}

/**
 * In-memory resolver for tests and the demo: connections keyed by `namespace/target`, passwords by
 * `namespace/role/sourceVersion`.
 */
export function inMemorySecrets(entries: {
  readonly connections: ReadonlyMap<string, ConnectionSpec>;
  readonly passwords: ReadonlyMap<string, string>;
}): ExecutionSecretResolver {
  return {
    connection: async ({ namespace, target }) => {
      const found = entries.connections.get(`${namespace}/${target}`);
      if (!found) throw new SecretUnavailableError(`no connection for target ${target}`);
      return { connection: found, target };
    },
    password: async ({ namespace, role, sourceVersion }) => {
      const found = entries.passwords.get(`${namespace}/${role}/${sourceVersion}`);
      if (found === undefined) {
        throw new SecretUnavailableError(`password source ${sourceVersion} of role ${role} is not readable`);
      }
      return found;
    },
  };
}
