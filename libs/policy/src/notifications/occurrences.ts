// What deserves a notification, derived from the objects as they are now (level-triggered): a plan waiting for
// approval, a decision, an outcome, an access request's lifecycle. Pure; ids are deterministic per occurrence.
import { createHash } from 'node:crypto';
import { planApproveCommands, requestApproveCommands } from './approve-commands.js';
import type { ConditionLike } from './condition-like.js';
import type { NotificationType } from './sink-config.js';

/** The identity recorded with a decision or a request (no uid: receivers get names and groups). */
export interface NotifiedIdentity {
  readonly username: string;
  readonly groups?: readonly string[];
}

/** One notification-worthy occurrence. Everything in it is shown to the receiver: no secret value, ever. */
export interface Occurrence {
  /** Deterministic: the same object, transition and transition time always give the same id. */
  readonly id: string;
  readonly type: NotificationType;
  readonly kind: 'PostgresPolicyPlan' | 'EphemeralAccessRequest';
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  /** RFC 3339 time of the transition, when the object records it; otherwise when it was first seen. */
  readonly time: string;
  /** False when `time` is the observation time (the object records none). */
  readonly timeRecorded: boolean;
  /** One line for people (Slack text, log lines). */
  readonly title: string;
  readonly data: Readonly<Record<string, unknown>>;
}

type Json = { readonly [key: string]: unknown };

interface Meta {
  readonly name: string;
  readonly namespace: string;
  readonly uid: string;
  readonly annotations?: Readonly<Record<string, string>> | null;
  readonly deletionTimestamp?: string | null;
}

/** A PostgresPolicyPlan as the notifier reads it. */
export interface PlanLike {
  readonly metadata: Meta;
  readonly spec: {
    readonly policyRef: { readonly name: string };
    readonly scope?: unknown;
    /** A candidate's plan names the PostgresPolicyCandidate it previews. */
    readonly origin?: { readonly kind: string; readonly name: string } | null;
  };
  readonly status?: {
    readonly phase?: string;
    readonly conditions?: readonly ConditionLike[];
    readonly decidedBy?: NotifiedIdentity | null;
    readonly changeDigest?: string | null;
    readonly changeSummary?: Readonly<Record<string, number | undefined>> | null;
    readonly computedAt?: string | null;
    readonly appliedAt?: string | null;
    readonly failedAt?: string | null;
    readonly lastError?: string | null;
    readonly sqlStatements?: number | null;
  } | null;
}

/** The owning PostgresPolicy, for the mode and the plan warnings. */
export interface PolicyLike {
  readonly spec?: { readonly mode?: string | null };
  readonly status?: {
    readonly current_plan_ref?: { readonly name: string } | null;
    readonly plan_warnings?: readonly string[];
  } | null;
}

/** An EphemeralAccessRequest as the notifier reads it. */
export interface RequestLike {
  readonly metadata: Meta;
  readonly spec: {
    readonly accessPolicyRef: { readonly name: string };
    readonly subject: { readonly role: string };
    readonly requestedBy: NotifiedIdentity;
    readonly requestedDuration?: string | null;
    readonly justification?: string | null;
  };
  readonly status?: {
    readonly phase?: string;
    readonly conditions?: readonly ConditionLike[];
    readonly decidedBy?: NotifiedIdentity | null;
    readonly activatedAt?: string | null;
    readonly approvalExpiresAt?: string | null;
    readonly endedAt?: string | null;
    readonly expiresAt?: string | null;
    readonly lastError?: string | null;
    readonly resolvedAccess?: {
      readonly bundleHash: string;
      readonly grantedDuration: string;
      readonly memberships: readonly { readonly role: string; readonly inherit: boolean }[];
    } | null;
  } | null;
}

/** The annotation naming a plan's review ConfigMap (libs/kube REVIEW_CONFIGMAP_ANNOTATION). */
export const REVIEW_CONFIGMAP_ANNOTATION = 'rolepolicy.io/review-configmap';
/** The planner's own approval of `approval: auto` plans is not a decision people made. */
const AUTO_APPROVED_REASON = 'AutoApproved';

/**
 * The id of one occurrence: sha256 over the object's uid, the transition and the transition's recorded time
 * (empty when it has none: such transitions happen once per object), as 32 hex digits.
 * @example occurrenceId('6f1c…', 'plan.applied', '2026-11-27T10:00:00Z') // 'rp-3b9e…'
 */
export function occurrenceId(uid: string, type: NotificationType, at: string): string {
  return `rp-${createHash('sha256').update(`${uid}\n${type}\n${at}`).digest('hex').slice(0, 32)}`;
}

function trueCondition(
  conditions: readonly ConditionLike[] | undefined,
  type: string,
): ConditionLike | undefined {
  return conditions?.find((c) => c.type === type && c.status === 'True');
}

function conditionTime(c: ConditionLike | undefined): string | undefined {
  return c?.lastTransitionTime ?? c?.last_transition_time ?? undefined;
}

function identity(who: NotifiedIdentity | null | undefined): NotifiedIdentity | null {
  if (who === null || who === undefined) return null;
  return who.groups && who.groups.length > 0
    ? { username: who.username, groups: [...who.groups] }
    : { username: who.username };
}

function occurrence(
  meta: Meta,
  kind: Occurrence['kind'],
  type: NotificationType,
  recorded: string | null | undefined,
  now: string,
  title: string,
  data: Json,
  idKey: string = recorded ?? '',
): Occurrence {
  return {
    id: occurrenceId(meta.uid, type, idKey),
    type,
    kind,
    namespace: meta.namespace,
    name: meta.name,
    uid: meta.uid,
    time: recorded ?? now,
    timeRecorded: recorded !== null && recorded !== undefined,
    title,
    data,
  };
}

/** The counters of a change summary that are not zero, `total` first. */
function counts(summary: Readonly<Record<string, number | undefined>> | null | undefined): Json {
  const out: Record<string, number> = {};
  if (summary?.['total'] !== undefined) out['total'] = summary['total'];
  for (const [k, v] of Object.entries(summary ?? {}).sort(([a], [b]) => (a < b ? -1 : 1)))
    if (k !== 'total' && typeof v === 'number' && v !== 0) out[k] = v;
  return out;
}

/**
 * The occurrences a plan shows now: pending approval, a decision people recorded, applied, failed. Scoped
 * plans (ephemeral access) are the access-scheduler's own and are told through their request instead.
 * `now` stands in for a transition time the plan does not record.
 */
export function planOccurrences(plan: PlanLike, policy: PolicyLike | undefined, now: string): Occurrence[] {
  if (plan.spec.scope !== undefined && plan.spec.scope !== null) return [];
  const { metadata: meta } = plan;
  const status = plan.status ?? {};
  const base = {
    policy: plan.spec.policyRef.name,
    plan: meta.name,
    candidate: plan.spec.origin?.kind === 'PostgresPolicyCandidate' ? plan.spec.origin.name : null,
    changeDigest: status.changeDigest ?? null,
  };
  const out: Occurrence[] = [];
  // The planner reads the first condition of a type (a later duplicate decides nothing): so does this.
  const first = (type: string) => {
    const c = status.conditions?.find((x) => x.type === type);
    return c?.status === 'True' ? c : undefined;
  };
  const approved = first('Approved');
  const denied = first('Denied');
  const decision = denied ?? approved;
  const phase = status.phase;
  // A plan is created before its status is written: pending means the planner has recorded its digest.
  const computed = typeof status.changeDigest === 'string' && status.changeDigest !== '';
  if (phase === 'Pending' && computed && decision === undefined && policy?.spec?.mode !== 'observe') {
    const current = policy?.status?.current_plan_ref?.name === meta.name;
    out.push(
      occurrence(
        meta,
        'PostgresPolicyPlan',
        'plan.pending-approval',
        status.computedAt,
        now,
        `Plan ${meta.namespace}/${meta.name} of policy ${base.policy} waits for approval`,
        {
          ...base,
          changeSummary: counts(status.changeSummary),
          sqlStatements: status.sqlStatements ?? null,
          warnings: current ? [...(policy?.status?.plan_warnings ?? [])] : [],
          reviewConfigMap: meta.annotations?.[REVIEW_CONFIGMAP_ANNOTATION] ?? null,
          approve: planApproveCommands(meta.namespace, meta.name, status.conditions),
        },
        '',
      ),
    );
  }
  if (decision !== undefined && decision.reason !== AUTO_APPROVED_REASON && status.decidedBy) {
    const by = identity(status.decidedBy);
    out.push(
      occurrence(
        meta,
        'PostgresPolicyPlan',
        'plan.decision-recorded',
        conditionTime(decision),
        now,
        `Plan ${meta.namespace}/${meta.name} ${decision.type.toLowerCase()} by ${by?.username}`,
        { ...base, decision: decision.type, decidedBy: by },
        decision.type,
      ),
    );
  }
  if (phase === 'Applied')
    out.push(
      occurrence(
        meta,
        'PostgresPolicyPlan',
        'plan.applied',
        status.appliedAt,
        now,
        `Plan ${meta.namespace}/${meta.name} of policy ${base.policy} applied`,
        { ...base, changeSummary: counts(status.changeSummary), appliedAt: status.appliedAt ?? null },
      ),
    );
  if (phase === 'Failed')
    out.push(
      occurrence(
        meta,
        'PostgresPolicyPlan',
        'plan.failed',
        status.failedAt,
        now,
        `Plan ${meta.namespace}/${meta.name} of policy ${base.policy} failed`,
        { ...base, failedAt: status.failedAt ?? null, lastError: status.lastError ?? null },
      ),
    );
  return out;
}

function requestData(request: RequestLike): Json {
  const { spec } = request;
  const status = request.status ?? {};
  const resolved = status.resolvedAccess ?? null;
  return {
    request: request.metadata.name,
    accessPolicy: spec.accessPolicyRef.name,
    subjectRole: spec.subject.role,
    requestedBy: identity(spec.requestedBy),
    justification: spec.justification ?? null,
    bundle: resolved
      ? {
          bundleHash: resolved.bundleHash,
          memberships: resolved.memberships.map((m) => ({ role: m.role, inherit: m.inherit })),
        }
      : null,
    duration: resolved?.grantedDuration ?? spec.requestedDuration ?? null,
    approvalExpiresAt: status.approvalExpiresAt ?? null,
    activatedAt: status.activatedAt ?? null,
    expiresAt: status.expiresAt ?? null,
  };
}

/**
 * The occurrences an access request shows now. `revoked` is told from the last state of a request that held
 * access when it is deleted (its finalizer goes only after the revocation): pass `deleted: true` then.
 */
export function requestOccurrences(request: RequestLike, now: string, deleted = false): Occurrence[] {
  const { metadata: meta } = request;
  const status = request.status ?? {};
  const phase = status.phase ?? 'Pending';
  const data = requestData(request);
  const who = `${meta.namespace}/${meta.name} (${request.spec.requestedBy.username} as ${request.spec.subject.role})`;
  const at = (c: string) => conditionTime(trueCondition(status.conditions, c));
  const out: Occurrence[] = [];
  const push = (
    type: NotificationType,
    recorded: string | null | undefined,
    title: string,
    extra: Json = {},
    key?: string,
  ) =>
    out.push(
      occurrence(meta, 'EphemeralAccessRequest', type, recorded, now, title, { ...data, ...extra }, key),
    );
  if (deleted) {
    if (status.activatedAt && ['Applying', 'Active', 'Revoking'].includes(phase))
      push('access.revoked', meta.deletionTimestamp, `Access ${who} revoked: request deleted`);
    return out;
  }
  if (phase === 'PendingApproval') {
    const resolved = status.resolvedAccess;
    push(
      'access.pending-approval',
      at('Resolved'),
      `Access request ${who} waits for approval`,
      resolved
        ? {
            approve: requestApproveCommands(
              meta.namespace,
              meta.name,
              resolved.bundleHash,
              resolved.grantedDuration,
              status.conditions,
            ),
          }
        : {},
      status.approvalExpiresAt ?? '',
    );
  }
  const decision = trueCondition(status.conditions, 'Denied') ?? trueCondition(status.conditions, 'Approved');
  if (decision !== undefined && status.decidedBy) {
    const by = identity(status.decidedBy);
    push(
      'access.decision-recorded',
      conditionTime(decision),
      `Access request ${who} ${decision.type.toLowerCase()} by ${by?.username}`,
      { decision: decision.type, decidedBy: by },
      decision.type,
    );
  }
  if (status.activatedAt && ['Active', 'Ended'].includes(phase))
    push(
      'access.active',
      status.activatedAt,
      `Access ${who} active until ${status.expiresAt ?? 'its expiry'}`,
    );
  if (phase === 'Ended')
    push('access.ended', status.endedAt, `Access ${who} ended`, { endedAt: status.endedAt ?? null });
  if (phase === 'Failed')
    push(
      'access.failed',
      at('Ready') ?? status.endedAt,
      `Access request ${who} failed`,
      { lastError: status.lastError ?? null },
      '',
    );
  if (phase === 'ApprovalExpired')
    push('access.approval-expired', status.approvalExpiresAt, `Access request ${who} expired unapproved`);
  return out;
}
