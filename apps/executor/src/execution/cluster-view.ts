// What the executor reads from the cluster: the fresh plan and policy through the ResourceCache, and the
// Secrets behind the connection and role passwords from the k8s-gateway at the moment of use (the API's
// current objects; the resource stream carries no values). Nothing read is kept or logged.
import type { ResourceCache, SecretAccessClient } from '@rolepolicy/contracts';
import { SecretAccessError } from '@rolepolicy/contracts';
import {
  DEFAULT_URL_KEY,
  paramsTarget,
  passwordSourceVersion,
  readPasswordForSource,
  readSecretKey,
  resolveConnection,
  type Connection,
  type SecretLike,
  type SecretLookup,
} from '@rolepolicy/kube';
import {
  buildGeneratedSecretTemplate,
  cachedPlan,
  cachedPolicy,
  type PostgresPolicy,
  type PostgresPolicyPlan,
} from '@rolepolicy/plan-lifecycle';
import type { SecretReader } from '@rolepolicy/contracts';
import { readPolicySecrets } from '@rolepolicy/plan-lifecycle';
import type { FreshState } from './fresh-verdict.js';
import {
  InvalidConnectionError,
  PasswordSourceChangedError,
  SecretReadUnavailableError,
  SecretUnavailableError,
  type ExecutionSecretResolver,
} from './secrets.js';

/** The executor's read-only view of the cluster. */
export interface ClusterView {
  /** The plan and policy a request names, as they are now (the cache is synced to the stream first). */
  fresh(ref: {
    readonly namespace: string;
    readonly plan: string;
    readonly policy: string;
  }): Promise<FreshState>;
  /**
   * Resolves at the next change the cache applies, or after `timeoutMs`: a request waiting for its plan
   * to become visible wakes when the plan arrives instead of on a polling tick.
   */
  changed(timeoutMs: number): Promise<void>;
  /** Connection and passwords resolved from the cached Secrets and the policy's current connection. */
  readonly secrets: ExecutionSecretResolver;
}

/**
 * The digest target reference a connection resolves to, from the spec alone (the same strings
 * `resolveConnection` returns), so a changed connection is recognised even when its Secret is not readable.
 */
export function connectionTarget(
  namespace: string,
  connection: Connection | null | undefined,
): string | undefined {
  if (connection?.secretRef != null) {
    return `${namespace}/${connection.secretRef.name}/${connection.secretKey ?? DEFAULT_URL_KEY}`;
  }
  if (connection?.params != null) return paramsTarget(namespace, connection.params);
  return undefined;
}

/** A read that failed, as the resolver's error (a refusal or an unreachable gateway: retried by redelivery). */
function readFailure(what: string, error: unknown): never {
  if (error instanceof SecretAccessError) {
    const message = `${what}: ${error.message}`;
    throw error.transient ? new SecretReadUnavailableError(message) : new SecretUnavailableError(message);
  }
  throw error;
}

// Policies and plans are read in the lifecycle's shape, as the planner reads them (uid, generation there).
function policyIn(cache: ResourceCache, namespace: string, name: string): PostgresPolicy | undefined {
  const object = cache.get('postgrespolicy', namespace, name);
  return (object && cachedPolicy(object)) ?? undefined;
}

function planIn(cache: ResourceCache, namespace: string, name: string): PostgresPolicyPlan | undefined {
  const object = cache.get('postgrespolicyplan', namespace, name);
  return (object && cachedPlan(object)) ?? undefined;
}

/**
 * A {@link ClusterView} over a started cache following `postgrespolicy` and `postgrespolicyplan`, reading
 * Secret values through `secrets`.
 */
export function cacheClusterView(
  cache: ResourceCache,
  secrets: SecretReader & Pick<SecretAccessClient, 'generate'>,
): ClusterView {
  const policyOf = (namespace: string, name: string) => policyIn(cache, namespace, name);
  const planOf = (namespace: string, name: string) => planIn(cache, namespace, name);
  return {
    changed: (timeoutMs) =>
      new Promise<void>((resolve) => {
        const done = (): void => {
          clearTimeout(timer);
          unsubscribe();
          resolve();
        };
        const timer = setTimeout(done, timeoutMs);
        const unsubscribe = cache.onChange(done);
      }),
    fresh: async ({ namespace, plan, policy }) => {
      await cache.sync();
      const current = policyOf(namespace, policy);
      return {
        policy: current,
        plan: planOf(namespace, plan),
        ...(current ? { target: connectionTarget(namespace, current.spec.connection as Connection) } : {}),
      };
    },
    secrets: {
      connection: async ({ namespace, policy }) => {
        await cache.ready;
        const current = policyOf(namespace, policy);
        if (current === undefined)
          throw new SecretUnavailableError(`policy ${namespace}/${policy} is not readable`);
        const read = await readPolicySecrets(secrets, current).catch((error: unknown) =>
          readFailure(`connection of policy ${namespace}/${policy}`, error),
        );
        const resolved = resolveConnection(namespace, read.policy.spec.connection as Connection, read.lookup);
        if (!resolved.ok) {
          if (resolved.reason === 'InvalidConnection') throw new InvalidConnectionError(resolved.message);
          throw new SecretUnavailableError(`${resolved.reason}: ${resolved.message}`);
        }
        return { connection: resolved.connection, target: resolved.target };
      },
      password: async ({ namespace, role, sourceVersion }) => {
        const secretName = sourceVersion.split(':')[0] ?? '';
        const fetched = await secrets
          .read(namespace, secretName === '' ? [] : [secretName])
          .catch((error: unknown) => readFailure(`password of role ${role}`, error));
        const lookup: SecretLookup = (name) => fetched.secrets.get(name) as SecretLike | undefined;
        const read = readPasswordForSource(namespace, sourceVersion, lookup);
        if (!read.ok && read.reason === 'SecretVersionChanged') {
          throw new PasswordSourceChangedError(`password of role ${role}: ${read.message}`);
        }
        if (!read.ok)
          throw new SecretUnavailableError(`password of role ${role}: ${read.reason}: ${read.message}`);
        return read.password;
      },
      generated: async ({ namespace, role, sourceVersion, policy, length }) => {
        const [secretName = '', secretKey = ''] = sourceVersion.split(':');
        const template = buildGeneratedSecretTemplate({
          policy: { metadata: { name: policy.name, namespace, uid: policy.uid } } as PostgresPolicy,
          role,
          secretName,
          secretKey,
          now: new Date().toISOString(),
        });
        await secrets
          .generate({ template: template as never, secretKey, length })
          .catch((error: unknown) => readFailure(`generated password of role ${role}`, error));
        const fetched = await secrets
          .read(namespace, [secretName])
          .catch((error: unknown) => readFailure(`generated password of role ${role}`, error));
        const secret = fetched.secrets.get(secretName);
        if (secret === undefined) {
          throw new SecretUnavailableError(
            `generated password Secret ${namespace}/${secretName} is not readable`,
          );
        }
        if (secret.controllerUid !== policy.uid) {
          // Someone else's Secret under the generated name: never set a password nobody generated for this plan.
          throw new PasswordSourceChangedError(
            `password of role ${role}: Secret ${namespace}/${secretName} exists but is not controlled by policy ${policy.name}`,
          );
        }
        const read = readSecretKey(namespace, secretName, secretKey, () => secret as SecretLike);
        if (!read.ok)
          throw new SecretUnavailableError(`password of role ${role}: ${read.reason}: ${read.message}`);
        return {
          password: read.value,
          sourceVersion: passwordSourceVersion(secretName, secretKey, read.resourceVersion),
        };
      },
    },
  };
}
