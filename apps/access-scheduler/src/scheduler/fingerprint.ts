// The target database fingerprint of a PostgresPolicy: its connection resolved from Secrets read through the
// gateway at the moment of use (the planner's path), reduced to logicalFingerprint(host, port, database).
// Only the fingerprint leaves this function; values are never kept, logged or written.
import { targetOfUrl } from '@rolepolicy/catalog';
import { SecretAccessError } from '@rolepolicy/contracts';
import {
  resolveConnection,
  type Connection,
  type PostgresPolicy,
  type ResolvedConnectionSpec,
} from '@rolepolicy/kube';
import { logicalFingerprint } from '@rolepolicy/policy';
import { readPolicySecrets, type SecretReader } from '../../../planner/src/reconcile/secret-reads.js';
import type { FingerprintRead } from '../lifecycle/resolution.js';
import { fromKubePolicy } from '../../../planner/src/lifecycle/index.js';

/** The address part of a resolved connection, as the executor and inspector see it. */
export function fingerprintOf(connection: ResolvedConnectionSpec): string {
  if ('params' in connection) {
    const { host, port, dbname } = connection.params;
    return logicalFingerprint(host, port, dbname);
  }
  const target = targetOfUrl(connection.url.trim());
  return logicalFingerprint(target.host, target.port, target.database);
}

/** Reads the policy's Secrets and fingerprints its connection; failures name Secrets, never values. */
export async function readFingerprint(
  reader: SecretReader,
  policy: PostgresPolicy,
): Promise<FingerprintRead> {
  const planned = fromKubePolicy(policy as never);
  if (planned === null) return { ok: false, message: 'the PostgresPolicy cannot be read' };
  try {
    const secrets = await readPolicySecrets(reader, planned);
    const resolved = resolveConnection(
      policy.metadata.namespace ?? '',
      secrets.policy.spec.connection as Connection,
      secrets.lookup,
    );
    if (!resolved.ok) return { ok: false, message: resolved.message };
    return { ok: true, fingerprint: fingerprintOf(resolved.connection) };
  } catch (error) {
    if (error instanceof SecretAccessError) return { ok: false, message: error.message };
    return {
      ok: false,
      message: error instanceof Error ? error.message.split('\n')[0]! : 'unreadable connection',
    };
  }
}
