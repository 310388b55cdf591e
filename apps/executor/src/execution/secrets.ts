// Where the executor gets what must never travel in an execution request: the target connection and
// the cleartext of each password source version. Injected, so production and tests differ only here.
import { SafeError, type ConnectionSpec } from '@rolepolicy/catalog';

/** Resolves secrets for one request; implementations must never log what they return. */
export interface ExecutionSecretResolver {
  /** The connection of `target` (the digest's target reference) in `namespace`. */
  connection(query: { readonly namespace: string; readonly target: string }): Promise<ConnectionSpec>;
  /** The cleartext of `role`'s password at exactly `sourceVersion`; throws when that version is not readable. */
  password(query: {
    readonly namespace: string;
    readonly role: string;
    readonly sourceVersion: string;
  }): Promise<string>;
}

/** Injection token of the {@link ExecutionSecretResolver}. */
export const EXECUTION_SECRETS = Symbol('rp.executor.secrets');

/**
 * Raised when a secret cannot be resolved; the message names references, never values (a SafeError,
 * so the catalog's redaction passes it through with its type).
 */
export class SecretUnavailableError extends SafeError {
  override readonly name = 'SecretUnavailableError';
}

/**
 * Production placeholder until the gateway serves Secret reads (docs/next-steps/executor.md): every
 * request fails closed with a clear reason instead of guessing a connection.
 */
export const gatewaySecretsNotWired: ExecutionSecretResolver = {
  connection: ({ target }) =>
    Promise.reject(new SecretUnavailableError(`no Secret resolver is wired yet (target ${target})`)),
  password: ({ role }) =>
    Promise.reject(new SecretUnavailableError(`no Secret resolver is wired yet (password of role ${role})`)),
};

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
      return found;
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
