// Gather, the first part of the planner's loop: which policies a cache change concerns. Each change
// becomes a list of effects the reconciler carries out in order (wake a policy, follow or forget one,
// drop our own writes of a deleted plan, compare a Secret's version). Signatures remembered here make
// the planner's own status writes on plans and candidates wake nothing.
import type { AnyCached, ResourceCache, ResourceChange } from '@rolepolicy/contracts';
import { candidateControllerUid } from '../candidates/candidate-planner.js';
import { EphemeralTriggers } from './ephemeral-triggers.js';
import { controllerUid, planSignature, policySignature, versionOf } from './triggers.js';

/** What one change asks of the reconciler, in order. */
export type ChangeEffect =
  /** Run a pass of the policy; `ifKnown`: only when the reconciler follows it already. */
  | { readonly kind: 'wake'; readonly key: string; readonly ifKnown?: boolean }
  /** The policy exists now (created or changed): follow it, and wake it when its signature moved. */
  | { readonly kind: 'policy'; readonly object: AnyCached }
  /** The policy is gone: forget its state. */
  | { readonly kind: 'forget'; readonly key: string }
  /** The plan is gone: nothing of ours stands for it any more. */
  | { readonly kind: 'planGone'; readonly namespace: string; readonly name: string }
  /** A plan as it is now (its review ConfigMap may be due). */
  | { readonly kind: 'planSeen'; readonly object: AnyCached }
  /** A Secret moved: wake the namespace's policies that read another version of it. */
  | { readonly kind: 'secret'; readonly namespace: string; readonly name: string; readonly version: string };

/** `namespace/name` of a policy. */
export const policyKey = (namespace: string, name: string): string => `${namespace}/${name}`;

const objectKey = (object: AnyCached): string => policyKey(object.metadata.namespace, object.metadata.name);

/** Maps cache changes to the reconciler's effects. */
export class ChangeKeys {
  /** Plan key -> signature: a plan's own status writes wake nothing. */
  private readonly planSignatures = new Map<string, string>();
  /** Candidate key -> signature (uid, generation, deletion): the candidate's own status writes never wake. */
  private readonly candidateSignatures = new Map<string, string>();
  private readonly ephemeral = new EphemeralTriggers();

  /** Owners are found by uid through the cache's index: a walk of the namespace per plan event grew with N. */
  constructor(private readonly cache: Pick<ResourceCache, 'withUid'>) {}

  /** Remembers the plans the cache holds at start, so their unchanged signatures wake nothing. */
  seedPlans(plans: readonly AnyCached[]): void {
    for (const plan of plans) this.planSignatures.set(objectKey(plan), planSignature(plan));
  }

  /** The effects of one change, in the order they must be carried out. */
  effectsOf(change: ResourceChange): ChangeEffect[] {
    const effects: ChangeEffect[] = [];
    const key = policyKey(change.namespace, change.name);
    // Ephemeral access starting or ending recomposes the target policy's held access (ephemeral-triggers.ts).
    const woken = this.ephemeral.wake(change, (ns, uid) => this.cache.withUid('postgrespolicy', ns, uid));
    if (woken !== undefined) effects.push({ kind: 'wake', key: woken, ifKnown: true });
    switch (change.kind) {
      case 'postgrespolicy':
        if (change.type === 'delete' || change.object === undefined) effects.push({ kind: 'forget', key });
        else effects.push({ kind: 'policy', object: change.object });
        break;
      case 'postgrespolicyplan':
        effects.push(...this.planEffects(key, change));
        break;
      case 'postgrespolicycandidate': {
        const signature =
          change.type === 'delete' || change.object === undefined ? '' : policySignature(change.object);
        if (this.candidateSignatures.get(key) === signature) break;
        if (signature === '') this.candidateSignatures.delete(key);
        else this.candidateSignatures.set(key, signature);
        // Defensive like every read of a cached spec here: a malformed object wakes nothing.
        const parent = change.object?.spec?.policyRef?.name;
        if (parent !== undefined) effects.push({ kind: 'wake', key: policyKey(change.namespace, parent) });
        break;
      }
      case 'secret': {
        const version = change.type === 'delete' ? '' : versionOf(change.object);
        effects.push({ kind: 'secret', namespace: change.namespace, name: change.name, version });
        break;
      }
      default:
        break;
    }
    return effects;
  }

  private planEffects(
    key: string,
    change: Extract<ResourceChange, { kind: 'postgrespolicyplan' }>,
  ): ChangeEffect[] {
    if (change.type === 'delete' || change.object === undefined) {
      this.planSignatures.delete(key);
      return [{ kind: 'planGone', namespace: change.namespace, name: change.name }];
    }
    const signature = planSignature(change.object);
    const previous = this.planSignatures.get(key);
    this.planSignatures.set(key, signature);
    const effects: ChangeEffect[] = [{ kind: 'planSeen', object: change.object }];
    if (previous === signature) return effects;
    const owner = controllerUid(change.object);
    const policy =
      owner === undefined ? undefined : this.cache.withUid('postgrespolicy', change.namespace, owner);
    if (policy !== undefined) return [...effects, { kind: 'wake', key: objectKey(policy) }];
    const parent = this.candidateParent(change.namespace, candidateControllerUid(change.object));
    return parent === undefined ? effects : [...effects, { kind: 'wake', key: parent }];
  }

  /** A decision on a candidate's plan wakes the candidate's policy (the candidate pass runs in its slot). */
  private candidateParent(namespace: string, candidateUid: string | undefined): string | undefined {
    if (candidateUid === undefined) return undefined;
    const candidate = this.cache.withUid('postgrespolicycandidate', namespace, candidateUid);
    const parent = candidate?.spec?.policyRef?.name;
    return parent === undefined ? undefined : policyKey(namespace, parent);
  }
}
