// What the executor reads from the cluster, through the ResourceCache (the gateway publishes every object):
// the fresh plan and policy, and the Secrets behind the connection and role passwords. No value is logged.
import type { ResourceCache } from '@rolepolicy/contracts';
import {
  readPasswordForSource,
  resolveConnection,
  type Connection,
  type SecretLike,
  type SecretLookup,
} from '@rolepolicy/kube';
import type { PostgresPolicy, PostgresPolicyPlan } from '../../../planner/src/lifecycle/resources.js';
import type { FreshState } from './fresh-verdict.js';
import { InvalidConnectionError, SecretUnavailableError, type ExecutionSecretResolver } from './secrets.js';

/** The executor's read-only view of the cluster. */
export interface ClusterView {
  /** The plan and policy a request names, as they are now. */
  fresh(ref: {
    readonly namespace: string;
    readonly plan: string;
    readonly policy: string;
  }): Promise<FreshState>;
  /** Connection and passwords resolved from the cached Secrets and the policy's current connection. */
  readonly secrets: ExecutionSecretResolver;
}

/** A {@link ClusterView} over a started cache following `secret`, `postgrespolicy` and `postgrespolicyplan`. */
export function cacheClusterView(cache: ResourceCache): ClusterView {
  const secretsOf =
    (namespace: string): SecretLookup =>
    (name) =>
      cache.get('secret', namespace, name) as SecretLike | undefined;
  const policyOf = (namespace: string, name: string): PostgresPolicy | undefined =>
    cache.get('postgrespolicy', namespace, name) as unknown as PostgresPolicy | undefined;

  return {
    fresh: async ({ namespace, plan, policy }) => {
      await cache.ready;
      return {
        policy: policyOf(namespace, policy),
        plan: cache.get('postgrespolicyplan', namespace, plan) as unknown as PostgresPolicyPlan | undefined,
      };
    },
    secrets: {
      connection: async ({ namespace, policy }) => {
        await cache.ready;
        const current = policyOf(namespace, policy);
        if (current === undefined)
          throw new SecretUnavailableError(`policy ${namespace}/${policy} is not readable`);
        const resolved = resolveConnection(
          namespace,
          current.spec.connection as Connection,
          secretsOf(namespace),
        );
        if (!resolved.ok) {
          if (resolved.reason === 'InvalidConnection') throw new InvalidConnectionError(resolved.message);
          throw new SecretUnavailableError(`${resolved.reason}: ${resolved.message}`);
        }
        return { connection: resolved.connection, target: resolved.target };
      },
      password: async ({ namespace, role, sourceVersion }) => {
        await cache.ready;
        const read = readPasswordForSource(namespace, sourceVersion, secretsOf(namespace));
        if (!read.ok)
          throw new SecretUnavailableError(`password of role ${role}: ${read.reason}: ${read.message}`);
        return read.password;
      },
    },
  };
}
