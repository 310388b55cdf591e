// The request state machine's vocabulary: phases, the pass's input and decision, its actions and the
// internal step a phase handler returns. Types and constants only.
import type {
  EphemeralAccessRequest,
  EphemeralAccessRequestStatus,
  PostgresPolicyPlan,
} from '@rolepolicy/kube';
import type { ScopeOperation } from '@rolepolicy/policy';
import type { ConditionInput } from './conditions.js';
import type { Resolution, Unresolved } from './resolution.js';
import type { TargetView } from './target.js';

/** Finalizer that makes deletion of a holding request revoke first. */
export const REQUEST_FINALIZER = 'rolepolicy.io/ephemeral-access';

/** Request phases (spec). */
export type RequestPhase = NonNullable<EphemeralAccessRequestStatus['phase']>;

/** Phases after which nothing happens any more. */
export const TERMINAL_PHASES: readonly RequestPhase[] = [
  'Ended',
  'Revoked',
  'Cancelled',
  'Denied',
  'ApprovalExpired',
  'Failed',
];

/** What a pass reads. */
export interface RequestInput {
  readonly request: EphemeralAccessRequest;
  /** The request resolved against the current access policy and target (null when not needed). */
  readonly resolution: Resolution | Unresolved | null;
  readonly target: TargetView | null;
  readonly activationPlan: PostgresPolicyPlan | undefined;
  readonly revokePlan: PostgresPolicyPlan | undefined;
  readonly now: number;
  /** No admission policy authenticates decisions (ADR 0026): a request waiting for one says so on Ready. */
  readonly decisionsUnauthenticated?: boolean;
}

/** A side effect of a pass, in order. */
export type RequestAction =
  | { readonly kind: 'addFinalizer' }
  | { readonly kind: 'removeFinalizer' }
  /** Create (or re-arm a Failed) scoped plan in phase Applying. */
  | { readonly kind: 'createPlan'; readonly operation: ScopeOperation }
  /** Ask the executor to run the plan (it exists in phase Applying). */
  | { readonly kind: 'sendScoped'; readonly operation: ScopeOperation }
  /** Delete an object that holds the plan's name but is not the scheduler's plan (ADR 0020). */
  | { readonly kind: 'deletePlan'; readonly operation: ScopeOperation };

/** A phase change, for the audit trail. `Revoked` is logged for a deleted request, never persisted. */
export interface Transition {
  readonly from: RequestPhase;
  readonly to: RequestPhase;
  readonly reason: string;
  readonly message: string;
}

/** The decision of one pass. */
export interface RequestDecision {
  /** The whole status to write, or null when it is already right. */
  readonly status: EphemeralAccessRequestStatus | null;
  readonly actions: readonly RequestAction[];
  readonly transition: Transition | null;
  /** The next deadline this request has (approval or access expiry), as ms. */
  readonly deadline: { readonly kind: 'approval' | 'expiry'; readonly at: number } | null;
  /** The pass waits on something else (a plan to appear, a result): look again after a short delay. */
  readonly waiting: boolean;
}

/** What a phase handler decides, before the status is assembled. */
export type Step = {
  phase: RequestPhase;
  reason: string;
  message: string;
  ready?: ConditionInput;
  applied?: ConditionInput | null;
  error?: string | null;
  actions: RequestAction[];
  waiting?: boolean;
  patch?: Partial<EphemeralAccessRequestStatus>;
};

/** True for a phase after which nothing happens. */
export const isTerminal = (phase: RequestPhase): boolean => TERMINAL_PHASES.includes(phase);
