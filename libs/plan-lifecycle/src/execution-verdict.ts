// The executor's last word before SQL: is the target still the one the plan was approved for, and does
// the digest recomputed under the database lock still equal the approved one? Pure; the executor supplies both.

import { executionGate, planDecision, planPhase } from './approval.js';
import type { PostgresPolicyPlan, PostgresPolicySpec } from './resources.js';
import { identityVerdict, type TargetIdentityReading } from '@rolepolicy/policy';

export {
  identityVerdict,
  type IdentityVerdict,
  type IdentityVerdictInput,
  type TargetIdentityReading,
} from '@rolepolicy/policy';

/** The approved target of a plan, as recorded in its status. */
export function recordedIdentity(plan: PostgresPolicyPlan): TargetIdentityReading {
  return {
    physical: plan.status?.targetPhysicalIdentity ?? null,
    logical: plan.status?.targetLogicalFingerprint ?? null,
  };
}

/** The executor's verdict on one execution request. */
export type ExecutionVerdict =
  | { readonly kind: 'execute' }
  | {
      readonly kind: 'skip';
      readonly reason:
        | 'NotApproved'
        | 'InProgress'
        | 'AlreadyTerminal'
        | 'Suspended'
        | 'ObserveMode'
        | 'OwnerTransferBlocked';
      readonly message: string;
    }
  | { readonly kind: 'superseded'; readonly reason: string; readonly message: string }
  | { readonly kind: 'fail_closed'; readonly reason: string; readonly message: string };

/** Inputs of {@link executionVerdict}. */
export interface ExecutionVerdictInput {
  /** The plan as freshly read (never the copy carried in the request). */
  readonly plan: PostgresPolicyPlan;
  /** The owning policy's spec as freshly read: suspend, mode and requirePhysicalIdentity may have changed since the request. */
  readonly policySpec: PostgresPolicySpec;
  /** From the executor's own re-plan: adopt-mode owner transfer while `allow_schema_owner_transfers` is false. */
  readonly ownerTransferBlocked: boolean;
  /** Digest and encoding recomputed under the database lock from a fresh inspection. */
  readonly recomputed: { readonly changeDigest: string; readonly changeDigestEncoding: string };
  readonly observed: TargetIdentityReading;
}

/**
 * SQL runs only for a plan in phase Approved (or Pending with a recorded approval) whose recorded
 * decision is Approved and not Denied, whose digest and encoding equal the recomputed ones, and whose
 * target identity verdict is proceed, while the policy is neither suspended nor in observe mode and no
 * owner transfer is blocked. Digests under different encodings are never comparable.
 */
export function executionVerdict(input: ExecutionVerdictInput): ExecutionVerdict {
  const { plan, recomputed, policySpec } = input;
  const phase = planPhase(plan);
  if (phase === 'Applying')
    return { kind: 'skip', reason: 'InProgress', message: 'plan is already Applying' };
  if (phase !== 'Pending' && phase !== 'Approved') {
    return { kind: 'skip', reason: 'AlreadyTerminal', message: `plan is ${phase}` };
  }
  if (planDecision(plan) !== 'approved') {
    return {
      kind: 'skip',
      reason: 'NotApproved',
      message: 'plan carries no terminal Approved=True decision',
    };
  }
  if (policySpec.suspend === true) {
    return { kind: 'skip', reason: 'Suspended', message: 'the policy is suspended' };
  }
  if (executionGate(policySpec) === 'never') {
    return {
      kind: 'skip',
      reason: 'ObserveMode',
      message: 'the policy is in observe mode, which never executes',
    };
  }
  if (input.ownerTransferBlocked) {
    return {
      kind: 'skip',
      reason: 'OwnerTransferBlocked',
      message: 'the plan transfers schema ownership in adopt mode and allow_schema_owner_transfers is false',
    };
  }
  const identity = identityVerdict({
    requirePhysicalIdentity: policySpec.connection.requirePhysicalIdentity === true,
    approved: recordedIdentity(plan),
    observed: input.observed,
  });
  if (identity.kind !== 'proceed') return identity;
  const sameEncoding = plan.status?.changeDigestEncoding === recomputed.changeDigestEncoding;
  if (!sameEncoding || plan.status?.changeDigest !== recomputed.changeDigest) {
    return {
      kind: 'superseded',
      reason: 'Superseded',
      message: 'the recomputed changeDigest differs from the approved one; the approved SQL was not executed',
    };
  }
  return { kind: 'execute' };
}
