// The audit record and the Event of one request transition: what a security reviewer reads to know who
// asked, who decided, what bundle on which database, and when access started and ended. Pure; no secret.
import { accessTransitionRecord, type AuditRecord } from '@rolepolicy/contracts';
import type { EphemeralAccessRequest } from '@rolepolicy/kube';
import type { Transition } from './request-machine.js';

/**
 * The audit record of `transition` on `request` (the request as it was before the transition's write; `after`
 * the status it writes): the shared schema's `access.*` record (libs/contracts, docs/audit.md).
 */
export function auditRecord(
  request: EphemeralAccessRequest,
  transition: Transition,
  at: string,
  after?: EphemeralAccessRequest['status'],
): AuditRecord {
  return accessTransitionRecord(request, transition, at, after);
}

/** `source.component` of the scheduler's Events. */
export const SCHEDULER_COMPONENT = 'rolepolicy-access-scheduler';

/** Phases a reviewer should notice: their Events are Warnings. */
const WARNING_PHASES: readonly string[] = ['Failed', 'Denied', 'ApprovalExpired'];

/** The Kubernetes Event of a transition, on the request (action `EphemeralAccessLifecycle`). */
export function transitionEvent(transition: Transition): {
  readonly type: 'Normal' | 'Warning';
  readonly reason: string;
  readonly message: string;
  readonly action: string;
  readonly component: string;
} {
  const text = `${transition.from} -> ${transition.to}: ${transition.message}`;
  return {
    type: WARNING_PHASES.includes(transition.to) ? 'Warning' : 'Normal',
    reason: /^[A-Z][A-Za-z0-9]*$/.test(transition.reason) ? transition.reason : transition.to,
    message: text.length <= 1024 ? text : `${text.slice(0, 1023)}…`,
    action: 'EphemeralAccessLifecycle',
    component: SCHEDULER_COMPONENT,
  };
}
