// The check an Activate passes against the EphemeralAccessPolicy its request names (ADR 0021): the request's
// snapshot must be what that policy allows now, whoever wrote the snapshot or sent the plan. Pure.
import { compareCodePoints } from '../canonical-order.js';
import type { BundleMembership } from './bundle.js';
import { parseEphemeralDuration } from './duration.js';

/** The fields of an EphemeralAccessPolicy the check reads. */
export interface TermsAccessPolicy {
  readonly metadata: {
    readonly name: string;
    readonly namespace?: string;
    readonly uid?: string;
    readonly generation?: number;
  };
  readonly spec: {
    readonly memberships: readonly { readonly role: string; readonly inherit: boolean }[];
    readonly maximumDuration: string;
    readonly postgresPolicyRef: { readonly name: string };
    readonly suspend?: boolean | null;
  };
}

/** The fields of an EphemeralAccessRequest the check reads (its verified `resolvedAccess`). */
export interface TermsRequest {
  readonly metadata: { readonly name: string; readonly namespace?: string };
  readonly spec: {
    readonly accessPolicyRef: { readonly name: string };
    readonly subject: { readonly role: string };
  };
  readonly resolved: {
    readonly accessPolicyUid: string;
    readonly accessPolicyGeneration: number;
    readonly grantedDuration: string;
    readonly memberships: readonly BundleMembership[];
  };
}

/** Why an Activate does not match its access policy (the result's reason; nothing runs). */
export type AccessTermsReason =
  | 'NamespaceMismatch'
  | 'AccessPolicyGone'
  | 'AccessPolicyChanged'
  | 'AccessPolicySuspended'
  | 'TargetMismatch'
  | 'SubjectMismatch'
  | 'MembershipNotInAccessPolicy'
  | 'DurationExceedsMaximum';

/** The verdict of {@link checkAccessTerms}. */
export type AccessTermsVerdict =
  | { readonly ok: true }
  | { readonly ok: false; readonly reason: AccessTermsReason; readonly message: string };

/** What {@link checkAccessTerms} reads. */
export interface AccessTermsInput {
  /** The namespace of the plan, the request and the target policy (each must be this one). */
  readonly namespace: string;
  readonly namespaces: { readonly request: string; readonly policy: string };
  readonly request: TermsRequest;
  /** The access policy named by `request.spec.accessPolicyRef`, in `namespace`, as read now. */
  readonly accessPolicy: TermsAccessPolicy | undefined;
  /** The target PostgresPolicy of the plan. */
  readonly targetPolicy: string;
}

const refuse = (reason: AccessTermsReason, message: string): AccessTermsVerdict => ({
  ok: false,
  reason,
  message,
});

/**
 * Checks, in order: plan, request and target policy share one namespace; the access policy the request
 * names exists with the uid recorded in `resolvedAccess` and at least its generation; it is not suspended; it targets
 * the plan's policy; every membership goes to the request's subject and is one the policy lists, with the
 * same inherit; the granted duration is within `maximumDuration`. The first failure is the verdict.
 */
export function checkAccessTerms(input: AccessTermsInput): AccessTermsVerdict {
  const { namespace, request, accessPolicy: policy } = input;
  const foreign = Object.entries(input.namespaces).find(([, ns]) => ns !== namespace);
  if (foreign !== undefined) {
    return refuse(
      'NamespaceMismatch',
      `the ${foreign[0]} is in namespace ${foreign[1]}, not ${namespace} where the plan is`,
    );
  }
  const name = request.spec.accessPolicyRef.name;
  const label = `EphemeralAccessPolicy ${namespace}/${name}`;
  if (policy === undefined || policy.metadata.name !== name) {
    return refuse('AccessPolicyGone', `${label}, which the request names, does not exist`);
  }
  if ((policy.metadata.namespace ?? namespace) !== namespace) {
    return refuse('NamespaceMismatch', `${label} is in namespace ${policy.metadata.namespace ?? ''}`);
  }
  const { resolved } = request;
  if (policy.metadata.uid !== resolved.accessPolicyUid) {
    return refuse(
      'AccessPolicyChanged',
      `${label} has uid ${policy.metadata.uid ?? '(none)'}, not ${resolved.accessPolicyUid} recorded in resolvedAccess`,
    );
  }
  // A snapshot from a generation the policy never reached was not written by the resolver. A later
  // generation is judged by content below: suspending and resuming a policy must not void an approval, and
  // the scheduler already cancels requests whose bundle, duration or approval mode changed.
  if ((policy.metadata.generation ?? 0) < resolved.accessPolicyGeneration) {
    return refuse(
      'AccessPolicyChanged',
      `${label} is at generation ${policy.metadata.generation ?? 0}, below generation ${resolved.accessPolicyGeneration} recorded in resolvedAccess`,
    );
  }
  if (policy.spec.suspend === true) {
    return refuse('AccessPolicySuspended', `${label} is suspended (spec.suspend): no new access is granted`);
  }
  if (policy.spec.postgresPolicyRef.name !== input.targetPolicy) {
    return refuse(
      'TargetMismatch',
      `${label} targets PostgresPolicy ${policy.spec.postgresPolicyRef.name}, not ${input.targetPolicy}`,
    );
  }
  const subject = request.spec.subject.role;
  const listed = new Map(policy.spec.memberships.map((m) => [m.role, m.inherit]));
  for (const m of [...resolved.memberships].sort((a, b) => compareCodePoints(a.role, b.role))) {
    if (m.member !== subject) {
      return refuse(
        'SubjectMismatch',
        `resolvedAccess grants role ${m.role} to ${m.member}, not to the request's subject ${subject}`,
      );
    }
    const inherit = listed.get(m.role);
    if (inherit === undefined) {
      return refuse(
        'MembershipNotInAccessPolicy',
        `resolvedAccess grants role ${m.role}, which ${label} does not list in spec.memberships`,
      );
    }
    if (inherit !== m.inherit) {
      return refuse(
        'MembershipNotInAccessPolicy',
        `resolvedAccess grants role ${m.role} with inherit ${String(m.inherit)}, but ${label} lists it with inherit ${String(inherit)}`,
      );
    }
  }
  const granted = parseEphemeralDuration(resolved.grantedDuration);
  const maximum = parseEphemeralDuration(policy.spec.maximumDuration);
  if (!granted.ok || !maximum.ok || granted.seconds > maximum.seconds) {
    return refuse(
      'DurationExceedsMaximum',
      `resolvedAccess.grantedDuration ${resolved.grantedDuration} is not within spec.maximumDuration ` +
        `${policy.spec.maximumDuration} of ${label}`,
    );
  }
  return { ok: true };
}
