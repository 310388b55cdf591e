// Which followed policies read each Secret, and which version each read: a Secret change wakes the policies
// that read another version of it. Kept per Secret (`namespace/name`), so a change looks at its readers only;
// comparing every followed policy's reads made each Secret change grow with the fleet (issue 28, "Scale").
import type { NotPrepared, Prepared } from '../planning/prepare.js';

/**
 * The Secret versions a pass read (name -> resourceVersion, '' = absent): those it resolved, the generated
 * passwords it found missing, or, when it could not prepare, the cache's versions of the Secrets it names.
 */
export function versionsRead(
  prepared: Prepared | NotPrepared,
  cachedVersion: (name: string) => string,
): Map<string, string> {
  return new Map(
    prepared.ok
      ? [
          ...Object.entries(prepared.secretVersions),
          ...prepared.missingGenerated.map((m) => [m.secretName, ''] as [string, string]),
        ]
      : prepared.watchedSecrets.map((s) => [s, cachedVersion(s)]),
  );
}

/** The Secret versions each policy's last pass read, indexed by Secret. */
export class SecretReaders {
  /** Secret key (`namespace/name`) -> policy key -> the version that policy read ('' = absent). */
  private readonly bySecret = new Map<string, Map<string, string>>();
  /** Policy key -> the Secret keys its last pass read. */
  private readonly byPolicy = new Map<string, readonly string[]>();

  /**
   * The policy's last pass read these versions (Secret name -> resourceVersion, '' = absent) in its
   * namespace; they replace what it read before.
   */
  read(policyKey: string, namespace: string, versions: Iterable<readonly [string, string]>): void {
    this.forget(policyKey);
    const secrets: string[] = [];
    for (const [name, version] of versions) {
      const secret = `${namespace}/${name}`;
      let readers = this.bySecret.get(secret);
      if (readers === undefined) this.bySecret.set(secret, (readers = new Map()));
      readers.set(policyKey, version);
      secrets.push(secret);
    }
    if (secrets.length > 0) this.byPolicy.set(policyKey, secrets);
  }

  /** The policy is no longer followed: it reads nothing. */
  forget(policyKey: string): void {
    for (const secret of this.byPolicy.get(policyKey) ?? []) {
      const readers = this.bySecret.get(secret);
      readers?.delete(policyKey);
      if (readers?.size === 0) this.bySecret.delete(secret);
    }
    this.byPolicy.delete(policyKey);
  }

  /** The policies whose last pass read a version of this Secret other than `version` ('' = deleted). */
  staleReaders(namespace: string, name: string, version: string): string[] {
    const stale: string[] = [];
    for (const [policyKey, seen] of this.bySecret.get(`${namespace}/${name}`) ?? [])
      if (seen !== version) stale.push(policyKey);
    return stale;
  }
}
