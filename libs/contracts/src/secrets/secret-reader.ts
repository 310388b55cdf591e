// The port through which a service reads Secret values at the moment of use (ADR 0006): SecretAccessClient
// implements it over `rp.k8s.secret.read`; tests hand in a map.
import type { SecretReadResult } from './secret-client.js';

/** The gateway's Secret access as a service uses it (a SecretAccessClient in production). */
export interface SecretReader {
  read(
    namespace: string,
    names: readonly string[],
    options?: { readonly literalPasswordOf?: string },
  ): Promise<SecretReadResult>;
}
