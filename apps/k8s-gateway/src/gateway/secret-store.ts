// The gateway's SecretStore: answers Secret reads from the Kubernetes API at the moment of the request
// (never from a cache or the stream), reads a policy's literal connection password the same way, and
// creates generated-password Secrets create-only (409: the existing Secret is read back and kept).
import {
  ApiException,
  CoreV1Api,
  CustomObjectsApi,
  type KubeConfig,
  type V1Secret,
} from '@kubernetes/client-node';
import {
  StoreUnavailableError,
  type NewSecret,
  type SecretStore,
  type StoredSecret,
} from '@rolepolicy/contracts';
import { GROUP, KIND_NAMES, VERSION } from '@rolepolicy/kube';
import { secretReadVerdict, type SecretKeys, type SecretReadPolicy } from './references.js';

/** Whether some rolepolicy.io object in `namespace` names Secret `name` (the informers' view). */
export type ReferenceCheck = (namespace: string, name: string) => boolean;

function statusOf(error: unknown): number | undefined {
  return error instanceof ApiException ? error.code : undefined;
}

/** A failure described by its HTTP status only: a client error can carry a response body. */
function unavailable(what: string, error: unknown): StoreUnavailableError {
  const code = statusOf(error);
  return new StoreUnavailableError(
    `${what}: the Kubernetes API ${code === undefined ? 'did not answer' : `answered ${code}`}`,
  );
}

/** A {@link SecretStore} over the API the gateway talks to. */
export function apiSecretStore(
  kc: KubeConfig,
  referenced: ReferenceCheck,
  policy: SecretReadPolicy = 'referenced',
  /** The keys the references read (the informers' view); answers carry only those. */
  keysOf: (namespace: string, name: string) => SecretKeys = () => 'all',
): SecretStore {
  const core = kc.makeApiClient(CoreV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const read = async (namespace: string, name: string): Promise<V1Secret | undefined> => {
    try {
      return await core.readNamespacedSecret({ namespace, name });
    } catch (error) {
      if (statusOf(error) === 404) return undefined;
      throw unavailable(`reading Secret ${namespace}/${name}`, error);
    }
  };
  return {
    read: async (namespace, name) => (await read(namespace, name)) as StoredSecret | undefined,
    mayRead: (namespace, name, secret) =>
      secretReadVerdict(policy, namespace, name, secret, referenced, keysOf),
    literalPassword: async (namespace, policy) => {
      let object: { spec?: { connection?: { params?: { password?: unknown } } } };
      try {
        object = await custom.getNamespacedCustomObject({
          group: GROUP,
          version: VERSION,
          namespace,
          plural: KIND_NAMES.PostgresPolicy.plural,
          name: policy,
        });
      } catch (error) {
        if (statusOf(error) === 404) return undefined;
        throw unavailable(`reading PostgresPolicy ${namespace}/${policy}`, error);
      }
      const password = object.spec?.connection?.params?.password;
      return typeof password === 'string' ? password : undefined;
    },
    createIfAbsent: async (secret: NewSecret) => {
      const { namespace, name } = secret.metadata;
      let created = true;
      let written: V1Secret | undefined;
      try {
        written = await core.createNamespacedSecret({ namespace, body: secret as V1Secret });
      } catch (error) {
        if (statusOf(error) !== 409) throw unavailable(`creating Secret ${namespace}/${name}`, error);
        created = false;
        written = await read(namespace, name);
        if (written === undefined)
          throw new StoreUnavailableError(`Secret ${namespace}/${name} vanished after 409`);
      }
      return {
        created,
        uid: written.metadata?.uid ?? '',
        resourceVersion: written.metadata?.resourceVersion ?? '',
      };
    },
  };
}
