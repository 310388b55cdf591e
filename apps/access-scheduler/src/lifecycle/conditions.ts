// Conditions of access-policy and request status: set one, keeping its lastTransitionTime while nothing
// about it changed; and the decision conditions (Approved, Denied) a person wrote, which stay verbatim.
import type { AccessCondition } from '@rolepolicy/kube';

/** Condition types that record a person's decision on a request; never rewritten by the scheduler. */
export const DECISION_CONDITION_TYPES: readonly string[] = ['Approved', 'Denied'];

/** A condition to set: everything but lastTransitionTime. */
export type ConditionInput = Omit<AccessCondition, 'lastTransitionTime'>;

const MAX_MESSAGE = 2048;

/** Cuts a message to the schema's 2048 characters. */
export function conditionMessage(text: string): string {
  return text.length <= MAX_MESSAGE ? text : `${text.slice(0, MAX_MESSAGE - 1)}…`;
}

function same(a: AccessCondition, b: ConditionInput): boolean {
  return (
    a.status === b.status &&
    (a.reason ?? null) === (b.reason ?? null) &&
    (a.message ?? null) === (b.message ?? null) &&
    (a.bundleHash ?? null) === (b.bundleHash ?? null) &&
    (a.grantedDuration ?? null) === (b.grantedDuration ?? null)
  );
}

/**
 * The condition as it should be recorded: the previous one unchanged when nothing differs, otherwise the
 * new one stamped `now`. Null fields are left out (a merge patch would otherwise carry them).
 */
export function stampCondition(
  previous: readonly AccessCondition[] | null | undefined,
  next: ConditionInput,
  now: string,
): AccessCondition {
  const old = (previous ?? []).find((c) => c.type === next.type);
  if (old !== undefined && same(old, next)) return old;
  const out: Record<string, unknown> = { type: next.type, status: next.status };
  if (next.reason != null) out['reason'] = next.reason;
  if (next.message != null) out['message'] = conditionMessage(next.message);
  if (next.bundleHash != null) out['bundleHash'] = next.bundleHash;
  if (next.grantedDuration != null) out['grantedDuration'] = next.grantedDuration;
  out['lastTransitionTime'] = now;
  return out as AccessCondition;
}

/** The decision conditions of a status, exactly as written (their order kept). */
export function decisionConditions(
  conditions: readonly AccessCondition[] | null | undefined,
): AccessCondition[] {
  return (conditions ?? []).filter((c) => DECISION_CONDITION_TYPES.includes(c.type));
}

/** The True condition of a type, if any. */
export function trueCondition(
  conditions: readonly AccessCondition[] | null | undefined,
  type: string,
): AccessCondition | undefined {
  return (conditions ?? []).find((c) => c.type === type && c.status === 'True');
}
