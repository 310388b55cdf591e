// The target database fingerprint of a PostgresPolicy: its connection resolved from Secrets read through the
// gateway at the moment of use (the planner's path), reduced to logicalFingerprint(host, port, database).
// Only the fingerprint leaves this function; values are never kept, logged or written.
import { targetOfUrl } from '@rolepolicy/catalog';
import { SecretAccessError } from '@rolepolicy/contracts';
import { resolveConnection, type PostgresPolicy, type ResolvedConnectionSpec } from '@rolepolicy/kube';
import { logicalFingerprint } from '@rolepolicy/policy';
import type { SecretReader } from '@rolepolicy/contracts';
import { readPolicySecrets, secretsNamedBy } from '@rolepolicy/plan-lifecycle';
import type { FingerprintRead } from '../lifecycle/resolution.js';
import { fromKubePolicy } from '@rolepolicy/plan-lifecycle';

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
  const planned = fromKubePolicy(policy);
  if (planned === null) return { ok: false, message: 'the PostgresPolicy cannot be read' };
  try {
    const secrets = await readPolicySecrets(reader, planned);
    const resolved = resolveConnection(
      policy.metadata.namespace ?? '',
      secrets.policy.spec.connection,
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

/**
 * Target fingerprints read through the gateway once per (policy uid, generation, versions of the Secrets it
 * names): every pass of every request on the same target reuses it. Only the fingerprint is kept, never a
 * value; a failed read is not kept.
 */
export class FingerprintCache {
  private readonly known = new Map<string, { key: string; read: FingerprintRead }>();

  constructor(
    private readonly reader: SecretReader,
    /** resourceVersion of a Secret as the resource stream last showed it ('' when unknown). */
    private readonly versionOf: (namespace: string, name: string) => string,
  ) {}

  async of(target: PostgresPolicy): Promise<FingerprintRead> {
    const ns = target.metadata.namespace ?? '';
    const planned = fromKubePolicy(target as never);
    if (planned === null) return { ok: false, message: 'the PostgresPolicy cannot be read' };
    const key = JSON.stringify([
      target.metadata.generation,
      secretsNamedBy(planned).names.map((n) => [n, this.versionOf(ns, n)]),
    ]);
    const uid = target.metadata.uid ?? '';
    const known = this.known.get(uid);
    if (known !== undefined && known.key === key) return known.read;
    const read = await readFingerprint(this.reader, target);
    if (read.ok) this.known.set(uid, { key, read });
    return read;
  }
}
