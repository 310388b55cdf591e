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
