// The executor's pure decision under the database lock: run the approved SQL, report convergence, or
// refuse (superseded / fail closed). Identity rules are the engine's (docs/executor.md, "Decision").
import type { ExecuteRequestV2 } from '@rolepolicy/contracts';
import { identityVerdict, type TargetIdentityReading } from '@rolepolicy/policy';

/** What the executor recomputed from a fresh inspection while holding the lock. */
export interface Recomputed {
  readonly changeDigest: string;
  readonly changeDigestEncoding: string;
  readonly changeCount: number;
  readonly blockers: readonly string[];
  readonly ownerTransferBlocked: boolean;
  readonly observed: TargetIdentityReading;
}

/** Outcome of {@link decideExecution}; only `execute` lets SQL run. */
export type ExecutionDecision =
  | { readonly kind: 'execute' }
  | { readonly kind: 'converged'; readonly reason: 'AlreadyConverged'; readonly message: string }
  | {
      readonly kind: 'superseded';
      readonly reason:
        'TargetChanged' | 'TargetIdentityAppeared' | 'DigestMismatch' | 'DigestEncodingMismatch';
      readonly message: string;
    }
  | {
      readonly kind: 'fail_closed';
      readonly reason:
        'PhysicalIdentityRequired' | 'TargetIdentityUnavailable' | 'PlanBlocked' | 'OwnerTransferBlocked';
      readonly message: string;
    };

/**
 * Order: target identity (fail closed when the approved identity cannot be read now, or
 * requirePhysicalIdentity and unreadable); an empty re-plan is convergence (a redelivered, already
 * applied request runs nothing); blockers and a blocked owner transfer refuse; the digest must equal
 * the approved one under the same encoding.
 */
export function decideExecution(request: ExecuteRequestV2, now: Recomputed): ExecutionDecision {
  const identity = identityVerdict({
    requirePhysicalIdentity: request.requirePhysicalIdentity,
    approved: request.approvedIdentity,
    observed: now.observed,
  });
  switch (identity.kind) {
    case 'proceed':
      break;
    case 'fail_closed':
      return { kind: 'fail_closed', reason: identity.reason, message: identity.message };
    case 'superseded':
      return { kind: 'superseded', reason: identity.reason, message: identity.message };
    default: {
      const unreachable: never = identity;
      return unreachable;
    }
  }
  if (now.changeCount === 0) {
    return {
      kind: 'converged',
      reason: 'AlreadyConverged',
      message: 'the database already matches the policy; no SQL was run',
    };
  }
  if (now.blockers.length > 0) {
    return {
      kind: 'fail_closed',
      reason: 'PlanBlocked',
      message: `plan is blocked: ${now.blockers.join('; ')}`,
    };
  }
  if (now.ownerTransferBlocked) {
    return {
      kind: 'fail_closed',
      reason: 'OwnerTransferBlocked',
      message: 'the plan transfers schema ownership in adopt mode and allow_schema_owner_transfers is false',
    };
  }
  if (now.changeDigestEncoding !== request.changeDigestEncoding) {
    return {
      kind: 'superseded',
      reason: 'DigestEncodingMismatch',
      message: `the approved digest uses encoding ${request.changeDigestEncoding}, the executor computes ${now.changeDigestEncoding}`,
    };
  }
  if (now.changeDigest !== request.changeDigest) {
    return {
      kind: 'superseded',
      reason: 'DigestMismatch',
      message: 'the recomputed changeDigest differs from the approved one; the approved SQL was not executed',
    };
  }
  return { kind: 'execute' };
}
