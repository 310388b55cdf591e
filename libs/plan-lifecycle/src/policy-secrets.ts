// Which Secrets a policy names, and reading them for one pass: values are read at the moment of use from the
// k8s-gateway (the API's current objects), used for that pass only, never kept. `readPolicySecrets` awaits the
// reader it is handed (the I/O is the reader's); everything else here is pure. Planner, executor and
// access-scheduler read a policy's Secrets the same way.
import { SecretAccessError, type SecretReader } from '@rolepolicy/contracts';
import { passwordSecretRefs, type Connection, type SecretLike, type SecretLookup } from '@rolepolicy/kube';
import { expandPolicy, type PolicyContent } from '@rolepolicy/policy';
import type { ReconcileError } from './outcome.js';
import type { PostgresPolicy } from './resources.js';

/** The Secrets of one policy as the API has them now, and the policy with its literal password restored. */
export interface PolicySecrets {
  readonly lookup: SecretLookup;
  /** The policy to resolve: the cached one, with `params.password` set from the API (or removed). */
  readonly policy: PostgresPolicy;
}

/** The reconcile error of a read that failed (transient when asking again may help). */
export function secretReadError(error: unknown): ReconcileError {
  if (error instanceof SecretAccessError) {
    return {
      class: error.transient ? 'transient' : 'permanent',
      reason: error.transient ? 'SecretsUnavailable' : 'SecretAccessRefused',
      message: error.message,
    };
  }
  throw error;
}

/**
 * The cached policy with `spec.connection.params.password` as the API has it: the resource stream carries
 * only a placeholder for a literal password, so the value comes from the same read as the Secrets.
 */
export function withLiteralPassword(policy: PostgresPolicy, literal: string | undefined): PostgresPolicy {
  const params = policy.spec.connection?.params;
  if (params == null || params.password == null) return policy;
  const { password: _placeholder, ...rest } = params;
  const next = literal === undefined ? rest : { ...rest, password: literal };
  return { ...policy, spec: { ...policy.spec, connection: { ...policy.spec.connection, params: next } } };
}

/** Reads every Secret the policy names (and its literal password), in one request. */
export async function readPolicySecrets(
  reader: SecretReader,
  policy: PostgresPolicy,
): Promise<PolicySecrets> {
  const named = secretsNamedBy(policy);
  const read = await reader.read(policy.metadata.namespace, named.names, {
    ...(named.literalPassword ? { literalPasswordOf: policy.metadata.name } : {}),
  });
  return {
    lookup: (name) => read.secrets.get(name) as SecretLike | undefined,
    policy: named.literalPassword ? withLiteralPassword(policy, read.literalPassword) : policy,
  };
}

/**
 * The Secrets a policy names (connection and role passwords, generated ones included) and whether its
 * connection has a literal password, so one read at the moment of use gets everything a pass needs.
 */
export function secretsNamedBy(policy: PostgresPolicy): {
  readonly names: readonly string[];
  readonly literalPassword: boolean;
} {
  const connection = policy.spec.connection as Connection | null | undefined;
  const names = new Set(secretNamesOf(connection));
  const expansion = expandPolicy(policy.spec as PolicyContent, { policyName: policy.metadata.name });
  if (expansion.ok) {
    for (const ref of passwordSecretRefs(policy.metadata.name, expansion.desired.roles))
      names.add(ref.secretName);
  }
  return { names: [...names].sort(), literalPassword: connection?.params?.password != null };
}

export function secretNamesOf(connection: Connection | null | undefined): string[] {
  if (connection == null) return [];
  if (connection.secretRef != null) return [connection.secretRef.name];
  const params = connection.params;
  if (params == null) return [];
  return [
    params.hostSecret,
    params.portSecret,
    params.dbnameSecret,
    params.usernameSecret,
    params.passwordSecret,
    params.sslModeSecret,
  ].flatMap((ref) => (ref == null ? [] : [ref.name]));
}
