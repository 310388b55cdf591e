// What the executor reads from the cluster: the fresh plan and policy through the ResourceCache, and the
// Secrets behind the connection and role passwords from the k8s-gateway at the moment of use (the API's
// current objects; the resource stream carries no values). Nothing read is kept or logged.
import type { ResourceCache, ResourceSequences, SecretAccessClient } from '@rolepolicy/contracts';
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
import { planVisible, type FreshState } from './fresh-verdict.js';
import {
  InvalidConnectionError,
  PasswordSourceChangedError,
  SecretReadUnavailableError,
  SecretUnavailableError,
  type ExecutionSecretResolver,
} from './secrets.js';

/** The plan, and the policy owning it, that a request names. */
export type PlanRef = { readonly namespace: string; readonly plan: string; readonly policy: string };

/** The plan and policy an execution request names. */
export function planRef(request: {
  readonly plan: { readonly namespace: string; readonly name: string };
  readonly policy: { readonly name: string };
}): PlanRef {
  return { namespace: request.plan.namespace, plan: request.plan.name, policy: request.policy.name };
}

/** How {@link ClusterView.visible} waits. */
export type VisibleWait = {
  /** What the planner's cache had applied when it sent the request (absent from an older planner). */
  readonly seen: ResourceSequences | undefined;
  /** How long the cache may take to apply `seen` before the view asks the server instead (sync). */
  readonly sequenceWaitMs: number;
  /** How long the plan may take to show up with a decision once the view is that far. */
  readonly visibilityWaitMs: number;
};

/** The executor's read-only view of the cluster. */
export interface ClusterView {
  /**
   * The plan and policy a request names, as they are now: the cache is synced to the stream first (a
   * stream info, and a consumer info per kind not known caught up), so everything stored before the call
   * is seen. The read under the database lock uses this one: an approval is a real control.
   */
  fresh(ref: PlanRef): Promise<FreshState>;
  /** The plan and policy as the cache holds them now; no round trip. */
  held(ref: PlanRef): FreshState;
  /**
   * The plan and policy once the cache holds at least what the planner saw (`seen`, waited for locally; an
   * older planner's request, or a cache that does not get there in time, costs one sync instead), then
   * waiting on cache changes, without round trips, until the plan is visible with a decision; if it never
   * is, a last synced read. Only for the steps before the lock: a go taken on it is judged again on a
   * synced read under the lock.
   */
  visible(ref: PlanRef, wait: VisibleWait): Promise<FreshState>;
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
  const held = ({ namespace, plan, policy }: PlanRef): FreshState => {
    const current = policyOf(namespace, policy);
    return {
      policy: current,
      plan: planOf(namespace, plan),
      ...(current ? { target: connectionTarget(namespace, current.spec.connection as Connection) } : {}),
    };
  };
  const changed = (timeoutMs: number): Promise<void> =>
    new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        unsubscribe();
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      const unsubscribe = cache.onChange(done);
    });
  const fresh = async (ref: PlanRef): Promise<FreshState> => {
    await cache.sync();
    return held(ref);
  };
  return {
    changed,
    fresh,
    held,
    visible: async (ref, { seen, sequenceWaitMs, visibilityWaitMs }) => {
      const reached = seen !== undefined && (await cache.reach(seen, sequenceWaitMs));
      if (!reached) await cache.sync();
      const deadline = Date.now() + visibilityWaitMs;
      for (;;) {
        const state = held(ref);
        if (planVisible(state)) return state;
        // Not there yet (the gateway may not have published the planner's writes): the last look is synced.
        if (Date.now() >= deadline) return fresh(ref);
        // Woken by the next cache change (the plan or its decision arriving), at the latest after 100 ms.
        await changed(100);
      }
    },
    secrets: secretResolver(cache, policyOf, secrets),
  };
}

/** Connection and role passwords from the policy as cached and Secrets read through the gateway. */
function secretResolver(
  cache: Pick<ResourceCache, 'ready'>,
  policyOf: (namespace: string, name: string) => PostgresPolicy | undefined,
  secrets: SecretReader & Pick<SecretAccessClient, 'generate'>,
): ExecutionSecretResolver {
  return {
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
  };
}
