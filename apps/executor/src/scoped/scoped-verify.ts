// What a scoped execution request must prove before any database work, checked on the plan, the request and
// the target policy as the executor's cache holds them now (ADR 0008). Run before the lock and again under
// it. Pure.
import type { ScopedExecuteRequestV1 } from '@rolepolicy/contracts';
import {
  EPHEMERAL_REQUEST_ORIGIN,
  MEMBERSHIP_BUNDLE_SCOPE,
  hasActivationAnchor,
  scopedPlanName,
  verifyResolvedAccess,
  type AnchorPlan,
  type BundleMembership,
  type ResolvedBundle,
} from '@rolepolicy/policy';

/** A scoped request that runs a plan of one request (a Sweep has neither: `sweep-execution.ts`). */
export type PlanRequest = ScopedExecuteRequestV1 & { readonly operation: 'Activate' | 'Revoke' };

/** Whether `message` runs a request's plan (Activate or Revoke), not a Sweep. */
export function isPlanRequest(message: ScopedExecuteRequestV1): message is PlanRequest {
  return message.operation !== 'Sweep';
}

/** The fields of an EphemeralAccessRequest the executor reads. */
export interface ScopedRequestObject {
  readonly metadata: { readonly name: string; readonly uid?: string };
  readonly spec?: { readonly subject?: { readonly role?: string } };
  readonly status?: {
    readonly phase?: string | null;
    readonly resolvedAccess?: (ResolvedBundle & { readonly targetPolicyUid: string }) | null;
  } | null;
}

/** The fields of a PostgresPolicyPlan the executor reads (a scoped one, or the request's activation plan). */
export interface ScopedPlanObject extends AnchorPlan {
  readonly metadata: {
    readonly name: string;
    readonly ownerReferences?: readonly {
      readonly uid: string;
      readonly kind: string;
      readonly controller?: boolean;
    }[];
  };
  readonly spec: AnchorPlan['spec'] & { readonly policyRef?: { readonly name: string } };
}

/** The objects as read now (undefined when absent). */
export interface ScopedState {
  readonly plan: ScopedPlanObject | undefined;
  readonly request: ScopedRequestObject | undefined;
  readonly policy: { readonly metadata: { readonly uid?: string } } | undefined;
  /** The plan named after the request's activation (for an Activate, the plan itself). */
  readonly activationPlan: ScopedPlanObject | undefined;
}

/** A stop with the outcome to report. */
export interface ScopedStop {
  readonly outcome: 'Failed' | 'Blocked';
  readonly reason: string;
  readonly message: string;
}

/** The verdict of {@link verifyScoped}. */
export type ScopedVerdict =
  | {
      readonly kind: 'proceed';
      readonly memberships: readonly BundleMembership[];
      readonly subject: string;
      readonly targetDatabaseFingerprint: string;
    }
  /** The plan already reports Applied: it is never run twice. */
  | { readonly kind: 'applied' }
  /** The plan is not visible yet (the scheduler creates it before sending): retried by redelivery. */
  | { readonly kind: 'not_visible'; readonly message: string }
  | ({ readonly kind: 'stop' } & ScopedStop);

const failed = (reason: string, message: string): ScopedVerdict => ({
  kind: 'stop',
  outcome: 'Failed',
  reason,
  message,
});

/** Phases in which an Activate may run: activating, or retried after it ran (the result was lost). */
const ACTIVATE_PHASES = ['Applying', 'Active'];

/**
 * Checks, in order: the plan exists, is the deterministic scoped plan of this request, operation and bundle
 * (name, origin, scope, owner, policy), and is Applying (Applied: already done); the request exists with the
 * message's uid, its `resolvedAccess` verifies, carries this bundle hash and targets this policy's uid; the
 * policy exists with that uid; and the request holds its provenance anchor (its activation plan Applying or
 * Applied, `hasActivationAnchor`), in an activating phase for an Activate.
 */
export function verifyScoped(message: PlanRequest, state: ScopedState): ScopedVerdict {
  const requestUid = message.request.uid;
  const policyUid = message.policy.uid;
  const where = `plan ${message.plan.namespace}/${message.plan.name}`;
  if (requestUid === undefined || policyUid === undefined) {
    return failed(
      'InvalidRequest',
      'a scoped execution request must carry the request uid and the policy uid',
    );
  }
  const { plan } = state;
  const revoke = message.operation === 'Revoke';
  // An Activate runs only a plan the scheduler recorded (the provenance anchor). A Revoke does not wait for
  // its plan, which is only its record (ADR 0013): it can only remove this request's bundle from its subject,
  // and everything that proves that is checked on the request below.
  if (plan === undefined) {
    if (!revoke) return { kind: 'not_visible', message: `${where} is not visible` };
    return verifyRequest(message, state, requestUid, policyUid);
  }
  const expectedName = scopedPlanName(
    { name: message.request.name, uid: requestUid },
    message.operation,
    message.bundleHash,
  );
  const { origin, scope } = plan.spec;
  const controller = plan.metadata.ownerReferences?.find((o) => o.controller === true);
  if (
    plan.metadata.name !== expectedName ||
    origin?.kind !== EPHEMERAL_REQUEST_ORIGIN ||
    origin.uid !== requestUid ||
    scope?.kind !== MEMBERSHIP_BUNDLE_SCOPE ||
    scope.operation !== message.operation ||
    scope.bundleHash !== message.bundleHash ||
    plan.spec.policyRef?.name !== message.policy.name ||
    controller?.uid !== requestUid
  ) {
    return failed(
      'ScopeMismatch',
      `${where} is not the ${message.operation} plan of request ${message.request.name} (uid ${requestUid}) ` +
        `for bundle ${message.bundleHash} on policy ${message.policy.name} (expected name ${expectedName}, ` +
        `origin, scope and controller owner matching)`,
    );
  }
  const phase = plan.status?.phase ?? null;
  if (phase === 'Applied') return { kind: 'applied' };
  // Created, its status (phase Applying) not written yet: the gateway writes it right after the object.
  if (phase === null && !revoke) return { kind: 'not_visible', message: `${where} has no status yet` };
  if (phase !== 'Applying' && phase !== null) {
    return failed(
      'PlanNotApplying',
      `${where} is in phase ${phase ?? 'none'}, not Applying; nothing was run`,
    );
  }
  return verifyRequest(message, state, requestUid, policyUid);
}

/** The request, snapshot, policy and anchor checks of {@link verifyScoped}. */
function verifyRequest(
  message: PlanRequest,
  state: ScopedState,
  requestUid: string,
  policyUid: string,
): ScopedVerdict {
  const { request, policy } = state;
  const who = `request ${message.request.namespace}/${message.request.name} (uid ${requestUid})`;
  if (request === undefined) return failed('RequestGone', `${who} no longer exists`);
  if (request.metadata.uid !== requestUid) {
    return failed(
      'RequestRecreated',
      `${who} was deleted and recreated (uid now ${request.metadata.uid ?? 'none'})`,
    );
  }
  const resolved = request.status?.resolvedAccess;
  if (resolved == null) return failed('NotResolved', `${who} has no resolvedAccess`);
  const verdict = verifyResolvedAccess(resolved);
  if (!verdict.ok) return failed('InvalidResolvedAccess', `${who}: ${verdict.message}`);
  if (resolved.bundleHash !== message.bundleHash) {
    return failed(
      'BundleMismatch',
      `${who} resolved bundle ${resolved.bundleHash}, not ${message.bundleHash}`,
    );
  }
  if (resolved.targetPolicyUid !== policyUid) {
    return failed(
      'PolicyMismatch',
      `${who} targets policy uid ${resolved.targetPolicyUid}, not ${policyUid}`,
    );
  }
  const policyName = `policy ${message.policy.namespace}/${message.policy.name}`;
  if (policy === undefined) return failed('PolicyGone', `${policyName} no longer exists`);
  if (policy.metadata.uid !== policyUid) {
    return failed('PolicyRecreated', `${policyName} was deleted and recreated since the request resolved`);
  }
  if (!hasActivationAnchor(request, state.activationPlan, policyUid)) {
    return failed(
      'NoActivationAnchor',
      `${who} in phase ${request.status?.phase ?? 'none'} holds no activation plan (Applying or Applied) for ` +
        `this bundle: it holds no access and nothing was run`,
    );
  }
  if (message.operation === 'Activate' && !ACTIVATE_PHASES.includes(request.status?.phase ?? '')) {
    return failed(
      'NotActivating',
      `${who} is in phase ${request.status?.phase ?? 'none'}: nothing is activated`,
    );
  }
  const subject = request.spec?.subject?.role;
  if (subject === undefined) return failed('InvalidRequest', `${who} names no subject role`);
  return {
    kind: 'proceed',
    memberships: resolved.memberships,
    subject,
    targetDatabaseFingerprint: resolved.targetDatabaseFingerprint,
  };
}
