// The audit record of one request transition: what a security reviewer reads to know who asked, who
// decided, what bundle on which database, and when access started and ended. Pure; no secret is in it.
import type { EphemeralAccessRequest } from '@rolepolicy/kube';
import type { Transition } from './request-machine.js';

/** Name of the structured log event. */
export const AUDIT_EVENT = 'rolepolicy.ephemeral_access.lifecycle';

/** One line of the audit trail. */
export interface AuditRecord {
  readonly event: typeof AUDIT_EVENT;
  readonly at: string;
  readonly namespace: string;
  readonly request: string;
  readonly requestUid: string | null;
  readonly accessPolicy: string;
  readonly accessPolicyUid: string | null;
  readonly targetPolicyUid: string | null;
  readonly bundleHash: string | null;
  readonly grantedDuration: string | null;
  readonly subject: string;
  readonly requester: string;
  readonly decider: string | null;
  readonly fromPhase: string;
  readonly toPhase: string;
  readonly reason: string;
  readonly message: string;
  readonly expiresAt: string | null;
}

/** The record of `transition` on `request` (the request as it was before the transition's write). */
export function auditRecord(
  request: EphemeralAccessRequest,
  transition: Transition,
  at: string,
  after?: EphemeralAccessRequest['status'],
): AuditRecord {
  const status = after ?? request.status ?? {};
  const resolved = status.resolvedAccess ?? request.status?.resolvedAccess ?? null;
  return {
    event: AUDIT_EVENT,
    at,
    namespace: request.metadata.namespace ?? '',
    request: request.metadata.name ?? '',
    requestUid: request.metadata.uid ?? null,
    accessPolicy: request.spec.accessPolicyRef.name,
    accessPolicyUid: resolved?.accessPolicyUid ?? null,
    targetPolicyUid: resolved?.targetPolicyUid ?? null,
    bundleHash: resolved?.bundleHash ?? null,
    grantedDuration: resolved?.grantedDuration ?? null,
    subject: request.spec.subject.role,
    requester: request.spec.requestedBy.username,
    decider: status.decidedBy?.username ?? request.status?.decidedBy?.username ?? null,
    fromPhase: transition.from,
    toPhase: transition.to,
    reason: transition.reason,
    message: transition.message,
    expiresAt: status.expiresAt ?? null,
  };
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
