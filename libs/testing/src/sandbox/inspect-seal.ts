// The inspectors' seal key pair for tests and local stacks (ADR 0024): one X25519 pair per process, given to
// the planner (public half) and the inspector (private half) as they are configured in a deployment.
import { generateKeyPairSync } from 'node:crypto';

let pair: { readonly INSPECT_SEAL_PUBLIC_KEY: string; readonly INSPECT_SEAL_PRIVATE_KEY: string } | undefined;

/**
 * `INSPECT_SEAL_PUBLIC_KEY` and `INSPECT_SEAL_PRIVATE_KEY` of this process's test installation (the same
 * pair on every call, so services started in one process, or children given this env, agree).
 * @example startService(plannerService, { env: { ...inspectSealEnv(), NATS_URL } })
 */
export function inspectSealEnv(): {
  readonly INSPECT_SEAL_PUBLIC_KEY: string;
  readonly INSPECT_SEAL_PRIVATE_KEY: string;
} {
  if (pair === undefined) {
    const { publicKey, privateKey } = generateKeyPairSync('x25519');
    pair = {
      INSPECT_SEAL_PUBLIC_KEY: publicKey.export({ type: 'spki', format: 'der' }).toString('base64'),
      INSPECT_SEAL_PRIVATE_KEY: privateKey.export({ type: 'pkcs8', format: 'der' }).toString('base64'),
    };
  }
  return pair;
}
