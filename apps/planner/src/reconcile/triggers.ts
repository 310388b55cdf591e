// Which cache changes wake which policy (anti self-wake): a policy on generation, deletion or the
// force-reconcile annotation; a plan on its Approved/Denied decision; a Secret a policy read.
import type { AnyCached } from '@rolepolicy/contracts';
import { RECONCILE_REQUESTED_AT_ANNOTATION } from '@rolepolicy/plan-lifecycle';

type Meta = {
  readonly uid?: string;
  readonly generation?: number;
  readonly deletionTimestamp?: string;
  readonly resourceVersion?: string;
  readonly annotations?: Readonly<Record<string, string>>;
  readonly ownerReferences?: readonly {
    readonly uid: string;
    readonly controller?: boolean;
    readonly kind: string;
  }[];
};

function meta(object: AnyCached): Meta {
  return object.metadata as Meta;
}

/** What a policy event must change to start a reconcile (status writes change none of it). */
export function policySignature(object: AnyCached): string {
  const m = meta(object);
  return JSON.stringify([
    m.uid ?? null,
    m.generation ?? null,
    m.deletionTimestamp ?? null,
    m.annotations?.[RECONCILE_REQUESTED_AT_ANNOTATION] ?? null,
  ]);
}

/**
 * The Approved and Denied condition statuses of a plan: a person's decision wakes its policy. Phase
 * changes do not: the executor writes them and reports each on `rp.execute.result`, and a pass woken by
 * the phase alone could run before that report and plan the applied effects (e.g. a password) again.
 */
export function planSignature(object: AnyCached): string {
  const status = (object as { status?: { conditions?: { type: string; status: string }[] } }).status;
  const decision = (type: string): string | null =>
    status?.conditions?.find((c) => c.type === type)?.status ?? null;
  return JSON.stringify([decision('Approved'), decision('Denied')]);
}

/** The uid of the policy controlling a plan (its controller ownerReference), if any. */
export function controllerUid(object: AnyCached): string | undefined {
  return meta(object).ownerReferences?.find((o) => o.controller === true && o.kind === 'PostgresPolicy')?.uid;
}

/** The resourceVersion of a cached object ('' when absent). */
export function versionOf(object: AnyCached | undefined): string {
  return object === undefined ? '' : (meta(object).resourceVersion ?? '');
}
