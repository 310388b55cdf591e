// The oracle of secret-readers.spec: how the reconciler found the policies a Secret change wakes before
// SecretReaders (issue 28): every followed policy kept the versions its last pass read, and each Secret change
// compared the version of every followed policy of the namespace.

/** Followed policies by key (`namespace/name`), each with the Secret versions its last pass read. */
export class EveryPolicySecrets {
  private readonly policies = new Map<string, { secrets: Map<string, string> }>();

  /** The reconciler starts following the policy (a new state reads nothing yet). */
  follow(key: string): void {
    if (!this.policies.has(key)) this.policies.set(key, { secrets: new Map() });
  }

  forget(key: string): void {
    this.policies.delete(key);
  }

  /** A pass of a followed policy read these versions. */
  read(key: string, versions: ReadonlyMap<string, string>): void {
    const state = this.policies.get(key);
    if (state !== undefined) state.secrets = new Map(versions);
  }

  /** The walk `Reconciler.onChange` made for a Secret change. */
  staleReaders(namespace: string, name: string, version: string): string[] {
    const woken: string[] = [];
    for (const [key, state] of this.policies) {
      if (!key.startsWith(`${namespace}/`)) continue;
      const seen = state.secrets.get(name);
      if (seen !== undefined && seen !== version) woken.push(key);
    }
    return woken;
  }
}
