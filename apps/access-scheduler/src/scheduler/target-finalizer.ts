// Keeps the finalizer of each target PostgresPolicy in step with the requests holding access on it (ADR 0020):
// reads the cache, decides with the pure target guard, and sends the change once until the cache shows it.
import type { ResourceCache } from '@rolepolicy/contracts';
import type { PostgresPolicyPlan } from '@rolepolicy/kube';
import { planNameOf } from '../lifecycle/scoped-plan.js';
import { holdsTarget, TARGET_FINALIZER, targetFinalizerChange } from '../lifecycle/target-guard.js';
import { finalizerCommand, type Ref, type UnkeyedCommand } from './commands.js';

/** A finalizer change of ours is not sent again before the cache shows it, or this long. */
const RESEND_MS = 10_000;

/** What the sync reads and how it writes. */
export interface TargetFinalizerDeps {
  readonly cache: Pick<ResourceCache, 'withUid' | 'withFields'>;
  /** A scoped plan as the scheduler sees it (its own result overlay included). */
  readonly plan: (namespace: string, name: string) => PostgresPolicyPlan | undefined;
  readonly send: (command: UnkeyedCommand, owner: Ref) => Promise<void>;
  readonly now: () => number;
}

/** The target finalizers of one scheduler replica. */
export class TargetFinalizers {
  private readonly sent = new Map<string, { change: 'add' | 'remove'; at: number }>();

  constructor(private readonly deps: TargetFinalizerDeps) {}

  /** Adds or removes the finalizer of the policy with `uid` in `namespace` as its holders need. */
  async sync(namespace: string, uid: string): Promise<void> {
    const policy = this.deps.cache.withUid('postgrespolicy', namespace, uid);
    if (policy === undefined) return;
    // Only a request resolved to the policy can hold it (holdsTarget): the index, not the namespace's walk.
    const held = this.deps.cache
      .withFields('ephemeralaccessrequest', namespace, { targetPolicyUid: uid })
      .some(
        (r) =>
          r.status?.resolvedAccess != null &&
          holdsTarget(
            r,
            this.deps.plan(namespace, planNameOf(r, 'Activate')),
            this.deps.plan(namespace, planNameOf(r, 'Revoke')),
            uid,
          ),
      );
    const change = targetFinalizerChange(
      {
        finalizers: policy.metadata.finalizers ?? [],
        deleting: policy.metadata.deletionTimestamp !== undefined,
      },
      held,
    );
    const now = this.deps.now();
    if (change === null) {
      this.sent.delete(uid);
      return;
    }
    const last = this.sent.get(uid);
    if (last?.change === change && now - last.at < RESEND_MS) return;
    const ref: Ref = { kind: 'PostgresPolicy', namespace, name: policy.metadata.name ?? '', uid };
    await this.deps.send(finalizerCommand(ref, TARGET_FINALIZER, change === 'add'), ref);
    this.sent.set(uid, { change, at: now });
  }
}
