// Which ephemeral access changes wake which policy: a request whose phase, target or bundle changed wakes
// its target policy (by uid), a scoped plan whose phase changed wakes the policy it names, so the overlay
// is recomposed soon after access starts or ends instead of at the next interval.
import type { AnyCached } from '@rolepolicy/contracts';

type RequestLike = {
  readonly status?: {
    readonly phase?: string | null;
    readonly resolvedAccess?: { readonly targetPolicyUid?: string; readonly bundleHash?: string } | null;
  } | null;
};
type PlanLike = {
  readonly spec?: { readonly policyRef?: { readonly name?: string }; readonly scope?: unknown };
  readonly status?: { readonly phase?: string | null } | null;
};

/** What a change must alter to wake a policy, and which policy. */
function wakeOf(
  kind: string,
  object: AnyCached,
): { signature: string; policy: { uid: string } | { name: string } } | null {
  if (kind === 'ephemeralaccessrequest') {
    const status = (object as RequestLike).status;
    const uid = status?.resolvedAccess?.targetPolicyUid;
    if (uid === undefined) return null;
    return {
      signature: JSON.stringify([status?.phase ?? null, uid, status?.resolvedAccess?.bundleHash ?? null]),
      policy: { uid },
    };
  }
  if (kind === 'postgrespolicyplan') {
    const plan = object as PlanLike;
    const name = plan.spec?.policyRef?.name;
    if (plan.spec?.scope == null || name === undefined) return null;
    return { signature: JSON.stringify([plan.status?.phase ?? null]), policy: { name } };
  }
  return null;
}

/** Remembers the last signature per object and says which policy a change wakes. */
export class EphemeralTriggers {
  private readonly seen = new Map<string, string>();

  /**
   * The policy (`namespace/name`) to wake for `change`, if any. `policyWithUid` finds the namespace's policy
   * by uid (a request names its target by uid; the cache's uid index, not a walk of the namespace). A deleted
   * request or scoped plan wakes the policy it last named.
   */
  wake(
    change: {
      readonly type: 'upsert' | 'delete';
      readonly kind: string;
      readonly namespace: string;
      readonly name: string;
      readonly object?: AnyCached;
    },
    policyWithUid: (namespace: string, uid: string) => AnyCached | undefined,
  ): string | undefined {
    if (change.kind !== 'ephemeralaccessrequest' && change.kind !== 'postgrespolicyplan') return undefined;
    const key = `${change.kind}/${change.namespace}/${change.name}`;
    const previous = this.seen.get(key);
    if (change.type === 'delete' || change.object === undefined) {
      this.seen.delete(key);
      return previous === undefined ? undefined : (JSON.parse(previous) as { target: string }).target;
    }
    const wake = wakeOf(change.kind, change.object);
    if (wake === null) return undefined;
    const name =
      'name' in wake.policy
        ? wake.policy.name
        : policyWithUid(change.namespace, wake.policy.uid)?.metadata.name;
    if (name === undefined) return undefined;
    const target = `${change.namespace}/${name}`;
    const record = JSON.stringify({ signature: wake.signature, target });
    this.seen.set(key, record);
    return previous === record ? undefined : target;
  }
}
