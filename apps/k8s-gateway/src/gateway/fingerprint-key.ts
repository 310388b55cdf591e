// The installation's fingerprint key: 32 random bytes in a Secret beside the leader Lease, created once by
// whichever gateway replica leads first (create-only; 409: the existing key is read), so fingerprints are
// the same across replicas and restarts and mean nothing to someone without the key.
import { randomBytes } from 'node:crypto';
import { ApiException, CoreV1Api, type KubeConfig } from '@kubernetes/client-node';

const KEY = 'key';

/** Reads the key Secret `namespace/name`, creating it with a fresh random key when absent. */
export async function ensureFingerprintKey(
  kc: KubeConfig,
  namespace: string,
  name: string,
): Promise<Uint8Array> {
  const core = kc.makeApiClient(CoreV1Api);
  const read = async (): Promise<Uint8Array | undefined> => {
    try {
      const secret = await core.readNamespacedSecret({ namespace, name });
      const value = secret.data?.[KEY];
      if (value === undefined) throw new Error(`Secret ${namespace}/${name} has no key ${KEY}`);
      return Buffer.from(value, 'base64');
    } catch (error) {
      if (error instanceof ApiException && error.code === 404) return undefined;
      throw error;
    }
  };
  const existing = await read();
  if (existing !== undefined) return existing;
  try {
    await core.createNamespacedSecret({
      namespace,
      body: {
        metadata: { name, labels: { 'app.kubernetes.io/managed-by': 'rolepolicy' } },
        type: 'Opaque',
        data: { [KEY]: randomBytes(32).toString('base64') },
      },
    });
  } catch (error) {
    if (!(error instanceof ApiException && error.code === 409)) throw error;
  }
  const key = await read();
  if (key === undefined) throw new Error(`Secret ${namespace}/${name} could not be read after creating it`);
  return key;
}
