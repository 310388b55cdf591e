// What a person reads before deciding: a plan's counts, digest and warnings, a request's bundle, subject
// and deadlines; and the table rows of `plans`, `access list` and `candidate list`. Pure.
import type {
  ChangeSummary,
  EphemeralAccessRequest,
  PostgresPolicy,
  PostgresPolicyCandidate,
  PostgresPolicyPlan,
} from '@rolepolicy/kube';

import { age, humanGranted, relative } from './table.js';

const COUNTERS: readonly [keyof ChangeSummary, string][] = [
  ['roles_created', '+{n} roles'],
  ['roles_altered', '~{n} roles'],
  ['roles_dropped', '-{n} roles'],
  ['schemas_created', '+{n} schemas'],
  ['schema_owners_altered', '~{n} schema owners'],
  ['grants_added', '+{n} grants'],
  ['grants_revoked', '-{n} grants'],
  ['default_privileges_set', '+{n} default privileges'],
  ['default_privileges_revoked', '-{n} default privileges'],
  ['members_added', '+{n} members'],
  ['members_removed', '-{n} members'],
  ['passwords_set', '{n} passwords set'],
  ['sessions_terminated', '{n} sessions terminated'],
];

/**
 * The non-zero counters of a change summary, short: `+2 roles, +3 grants, -1 members`.
 * @example summaryText({ roles_created: 2, grants_added: 3, total: 5 }) // '+2 roles, +3 grants'
 */
export function summaryText(summary: ChangeSummary | null | undefined): string {
  const parts = COUNTERS.filter(([key]) => (summary?.[key] ?? 0) > 0).map(([key, text]) =>
    text.replace('{n}', String(summary![key])),
  );
  return parts.join(', ') || 'no changes';
}

/** Who or what a plan comes from: `policy shop` or `candidate shop-add-reader`. */
export function planOrigin(plan: PostgresPolicyPlan): string {
  const origin = plan.spec.origin;
  if (origin)
    return `${origin.kind === 'PostgresPolicyCandidate' ? 'candidate' : origin.kind} ${origin.name}`;
  if (plan.spec.scope) return `access ${plan.spec.scope.operation.toLowerCase()}`;
  return `policy ${plan.spec.policyRef.name}`;
}

/**
 * Warnings a decider should see: the policy's plan_warnings, an observe-mode policy (its plans never
 * run, an approval is ignored) and a truncated SQL preview.
 */
export function planWarnings(plan: PostgresPolicyPlan, policy: PostgresPolicy | undefined): string[] {
  const warnings = plan.spec.origin ? [] : [...(policy?.status?.plan_warnings ?? [])];
  if (!plan.spec.origin && policy?.spec.mode === 'observe') {
    warnings.push('the policy is in observe mode: this plan shows drift and never executes, even approved');
  }
  if (plan.status?.sqlTruncated) warnings.push('the SQL preview was truncated to fit object size limits');
  return warnings;
}

/** A plan waiting for a person: phase Pending and no decision recorded. */
export function isPendingDecision(plan: PostgresPolicyPlan): boolean {
  const decided = (plan.status?.conditions ?? []).some(
    (c) => (c.type === 'Approved' || c.type === 'Denied') && c.status === 'True',
  );
  return (plan.status?.phase ?? 'Pending') === 'Pending' && !decided;
}

/** Headers of `plans` (`wide` adds the digest). */
export function planHeaders(allNamespaces: boolean, wide: boolean): string[] {
  return [
    ...(allNamespaces ? ['NAMESPACE'] : []),
    'NAME',
    'ORIGIN',
    'PHASE',
    'CHANGES',
    'SUMMARY',
    'STATEMENTS',
    'WARNINGS',
    'AGE',
    ...(wide ? ['DIGEST'] : []),
  ];
}

/** One row of `plans`. */
export function planRow(
  plan: PostgresPolicyPlan,
  policy: PostgresPolicy | undefined,
  now: Date,
  allNamespaces: boolean,
  wide: boolean,
): string[] {
  const s = plan.status;
  return [
    ...(allNamespaces ? [plan.metadata.namespace ?? ''] : []),
    plan.metadata.name ?? '',
    planOrigin(plan),
    s?.phase ?? 'Pending',
    String(s?.changeSummary?.total ?? 0),
    summaryText(s?.changeSummary),
    String(s?.sqlStatements ?? ''),
    String(planWarnings(plan, policy).length),
    age(plan.metadata.creationTimestamp, now),
    ...(wide ? [s?.changeDigest ?? ''] : []),
  ];
}

/** Review findings counted by severity, as the summary line shows them. */
export interface FindingCounts {
  readonly error: number;
  readonly warning: number;
  readonly info: number;
}

/** The lines shown before a plan decision. */
export function planSummaryLines(
  plan: PostgresPolicyPlan,
  policy: PostgresPolicy | undefined,
  findings: FindingCounts | null,
  now: Date,
): string[] {
  const s = plan.status;
  const lines = [
    `Plan ${plan.metadata.namespace}/${plan.metadata.name} (${planOrigin(plan)}, ${plan.spec.reconciliationMode}, policy generation ${plan.spec.policyGeneration})`,
    `  changes:    ${s?.changeSummary?.total ?? 0} (${summaryText(s?.changeSummary)}), ${s?.sqlStatements ?? 0} statements`,
    `  digest:     ${s?.changeDigest ?? '(none)'}`,
    `  computed:   ${s?.computedAt ?? ''}${s?.computedAt ? ` (${relative(s.computedAt, now)})` : ''}`,
  ];
  if (findings) {
    lines.push(
      `  review:     ${findings.error} errors, ${findings.warning} warnings, ${findings.info} notes (kubectl rolepolicy review ${plan.metadata.name})`,
    );
  } else {
    lines.push('  review:     no review artifact recorded for this plan');
  }
  // The planner's own word on the waiting decision when it says more than "pending" (e.g. that decisions
  // are not authenticated in this cluster, ADR 0026).
  const waiting = (s?.conditions ?? []).find((c) => c.type === 'Approved' && c.status === 'False');
  if (waiting?.reason && waiting.reason !== 'PendingApproval') {
    lines.push(`  approval:   ${waiting.reason}${waiting.message ? `: ${waiting.message}` : ''}`);
  }
  if (plan.spec.origin?.kind === 'PostgresPolicyCandidate') {
    lines.push(
      "  note:       a candidate's plan runs only once the policy carries exactly the candidate's content",
    );
  }
  for (const warning of planWarnings(plan, policy)) lines.push(`  warning:    ${warning}`);
  return lines;
}

/** The lines shown before a request decision: what is granted, to whom, for how long, until when. */
export function requestSummaryLines(request: EphemeralAccessRequest, now: Date): string[] {
  const { spec, status } = request;
  const resolved = status?.resolvedAccess;
  const lines = [
    `Request ${request.metadata.namespace}/${request.metadata.name} (access policy ${spec.accessPolicyRef.name}, phase ${status?.phase ?? 'Pending'})`,
    `  subject:       ${spec.subject.role}`,
    `  requested by:  ${spec.requestedBy.username}`,
    `  justification: ${spec.justification ?? '(none)'}`,
  ];
  if (resolved) {
    lines.push(`  duration:      ${humanGranted(resolved.grantedDuration)} (${resolved.grantedDuration})`);
    for (const m of resolved.memberships) {
      lines.push(`  grants:        ${m.role} to ${m.member}${m.inherit ? '' : ' (noinherit)'}`);
    }
    lines.push(`  bundle:        ${resolved.bundleHash}`);
  } else {
    lines.push('  bundle:        not resolved yet');
  }
  if (status?.approvalExpiresAt && (status.phase ?? 'Pending') === 'PendingApproval') {
    lines.push(`  decide before: ${status.approvalExpiresAt} (${relative(status.approvalExpiresAt, now)})`);
  }
  if (status?.expiresAt)
    lines.push(`  expires:       ${status.expiresAt} (${relative(status.expiresAt, now)})`);
  if (status?.lastError) lines.push(`  last error:    ${status.lastError}`);
  // Ready's reason is the phase unless the scheduler has more to say (e.g. ApprovalUnauthenticated).
  const ready = (status?.conditions ?? []).find((c) => c.type === 'Ready');
  if (ready?.reason && ready.reason !== (status?.phase ?? 'Pending')) {
    lines.push(
      `  ready:         ${ready.status}/${ready.reason}${ready.message ? `: ${ready.message}` : ''}`,
    );
  }
  return lines;
}

/** Headers of `access list`. */
export function requestHeaders(allNamespaces: boolean): string[] {
  return [
    ...(allNamespaces ? ['NAMESPACE'] : []),
    'NAME',
    'POLICY',
    'SUBJECT',
    'PHASE',
    'DURATION',
    'EXPIRES',
    'REQUESTED-BY',
    'AGE',
  ];
}

/** One row of `access list`: EXPIRES is the approval deadline while PendingApproval, else the access end. */
export function requestRow(request: EphemeralAccessRequest, now: Date, allNamespaces: boolean): string[] {
  const { spec, status } = request;
  const phase = status?.phase ?? 'Pending';
  const deadline = phase === 'PendingApproval' ? status?.approvalExpiresAt : status?.expiresAt;
  return [
    ...(allNamespaces ? [request.metadata.namespace ?? ''] : []),
    request.metadata.name ?? '',
    spec.accessPolicyRef.name,
    spec.subject.role,
    phase,
    humanGranted(status?.resolvedAccess?.grantedDuration ?? spec.requestedDuration),
    relative(deadline, now),
    spec.requestedBy.username,
    age(request.metadata.creationTimestamp, now),
  ];
}

/** Headers of `candidate list`. */
export function candidateHeaders(allNamespaces: boolean): string[] {
  return [
    ...(allNamespaces ? ['NAMESPACE'] : []),
    'NAME',
    'POLICY',
    'PHASE',
    'READY',
    'PLAN',
    'DIGEST',
    'AGE',
  ];
}

/** One row of `candidate list`; DIGEST is the first 12 hex of the content digest. */
export function candidateRow(
  candidate: PostgresPolicyCandidate,
  now: Date,
  allNamespaces: boolean,
): string[] {
  const status = candidate.status;
  const ready = (status?.conditions ?? []).find((c) => c.type === 'Ready');
  return [
    ...(allNamespaces ? [candidate.metadata.namespace ?? ''] : []),
    candidate.metadata.name ?? '',
    candidate.spec.policyRef.name,
    status?.phase ?? 'Pending',
    ready ? `${ready.status}/${ready.reason ?? ''}` : '',
    status?.planRef?.name ?? '',
    (status?.contentDigest ?? '').replace(/^sha256:/, '').slice(0, 12),
    age(candidate.metadata.creationTimestamp, now),
  ];
}
