// When a request's access ends, from records a status patch cannot move later (ADR 0020): the approved
// `grantedDuration` (write-once) from the earliest credible activation time. Pure; never reads `expiresAt`.
import type { EphemeralAccessRequest, PostgresPolicyPlan } from '@rolepolicy/kube';
import type { PlanState } from './request-checks.js';
import { instant } from './time.js';

/** The clock of one request: when its access started and ends (ms), or undefined before it started. */
export interface AccessClock {
  readonly activatedAt: number | undefined;
  readonly expiresAt: number | undefined;
}

/** Seconds of a `<n>s` grantedDuration (the resolver's form), or undefined when it is not one. */
export function grantedSeconds(grantedDuration: string | undefined): number | undefined {
  const match = /^([0-9]+)s$/.exec(grantedDuration ?? '');
  return match === null ? undefined : Number(match[1]);
}

/**
 * The access clock. The start is the earlier of `status.activatedAt` (write-once, written by the scheduler
 * in the same write that moves the request to Applying) and the server-set creation time of the request's
 * activation plan (the scheduler creates it only after that write). An approver can write `activatedAt`
 * first, but the scheduler never creates an activation plan under an `activatedAt` in its future
 * ({@link clockTampered}), so either way the start is never later than the real activation; recreating
 * the plan later moves nothing because `activatedAt` stays. The end is start + grantedDuration.
 */
export function accessClock(
  request: EphemeralAccessRequest,
  activationPlan: PostgresPolicyPlan | undefined,
  activation: PlanState,
): AccessClock {
  const seconds = grantedSeconds(request.status?.resolvedAccess?.grantedDuration);
  const recorded = instant(request.status?.activatedAt);
  const ours = activation !== 'absent' && activation !== 'foreign';
  const planned = ours ? instant(activationPlan?.metadata.creationTimestamp) : undefined;
  const starts = [recorded, planned].filter((t): t is number => t !== undefined);
  const activatedAt = starts.length === 0 ? undefined : Math.min(...starts);
  const expiresAt =
    activatedAt === undefined || seconds === undefined ? undefined : activatedAt + seconds * 1000;
  return { activatedAt, expiresAt };
}

/**
 * Why the request's clock was set by someone else, or null: a request that has not reached Applying carries
 * an `activatedAt` (the scheduler writes it only with that move), or the scheduler is about to create the
 * activation plan under an `activatedAt` later than now (its own is never in its future).
 */
export function clockTampered(request: EphemeralAccessRequest, phase: string, now: number): string | null {
  const text = request.status?.activatedAt;
  if (text == null) return null;
  if (phase === 'Pending' || phase === 'PendingApproval') {
    return `status.activatedAt (${text}) was written before the access-scheduler started the clock; a request whose clock someone else set is never activated`;
  }
  const at = instant(text);
  if (at === undefined || at > now) {
    return `status.activatedAt (${text}) is not a time the access-scheduler wrote (unreadable or in the future); the request is never activated`;
  }
  return null;
}

/**
 * When a request's revocation is due, for ordering passes and for the lag metrics: the earlier of the reported
 * `status.expiresAt` and the write-once clock (`activatedAt` + `grantedDuration`). A later `expiresAt` patched
 * in by an approver can neither delay a revocation's turn nor shorten the measured lag; decisions use
 * {@link accessClock} itself.
 */
export function revocationDueAt(request: EphemeralAccessRequest): number | undefined {
  const reported = instant(request.status?.expiresAt);
  const computed = accessClock(request, undefined, 'absent').expiresAt;
  const known = [reported, computed].filter((t): t is number => t !== undefined);
  return known.length === 0 ? undefined : Math.min(...known);
}

/**
 * True for a request whose pass is a revocation in waiting: past its expiry while holding access, Revoking,
 * or deleted while holding. Such a pass takes the next free slot ahead of the others (ADR 0013).
 */
export function revocationWaiting(request: EphemeralAccessRequest | undefined, now: number): boolean {
  const phase = request?.status?.phase;
  if (request === undefined || (phase !== 'Applying' && phase !== 'Active' && phase !== 'Revoking'))
    return false;
  if (phase === 'Revoking' || request.metadata.deletionTimestamp !== undefined) return true;
  const dueAt = revocationDueAt(request);
  return dueAt !== undefined && now >= dueAt;
}
