// Condition list arithmetic shared by policy and plan status: one entry per type, at most 16, and
// `last_transition_time` that moves only when the status value moves (so watchers see real transitions).

import type { Condition, ConditionStatus } from './resources.js';

/** Spec limit on policy and plan conditions. */
export const MAX_CONDITIONS = 16;

/** What the planner wants a condition to say; the transition time is derived. */
export interface DesiredCondition {
  readonly status: ConditionStatus;
  readonly reason: string;
  readonly message: string;
}

/** Finds the first condition of a type. */
export function findCondition(
  conditions: readonly Condition[] | undefined,
  type: string,
): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

/** True when the condition of `type` exists with status "True". */
export function isConditionTrue(conditions: readonly Condition[] | undefined, type: string): boolean {
  return findCondition(conditions, type)?.status === 'True';
}

/**
 * Rebuilds a condition list: every type in `managed` is set (value) or removed (null); other types,
 * written by someone else, are kept after ours. Duplicates collapse to their first entry, because a
 * duplicated decision condition would make admission see the decision set change and reject our writes.
 * Output order is stable (managed types in `managed` key order, then foreign ones in their order) so an
 * unchanged status serialises identically and the write can be skipped.
 */
export function reconcileConditions(
  previous: readonly Condition[] | undefined,
  managed: Readonly<Record<string, DesiredCondition | null>>,
  now: string,
): readonly Condition[] {
  const prior = new Map<string, Condition>();
  for (const c of previous ?? []) if (!prior.has(c.type)) prior.set(c.type, c);
  const out: Condition[] = [];
  for (const [type, desired] of Object.entries(managed)) {
    if (desired === null) continue;
    const old = prior.get(type);
    const transition = old && old.status === desired.status ? (old.last_transition_time ?? now) : now;
    out.push({
      type,
      status: desired.status,
      reason: desired.reason,
      message: desired.message,
      last_transition_time: transition,
    });
  }
  for (const [type, c] of prior) if (!(type in managed)) out.push(c);
  return out.slice(0, MAX_CONDITIONS);
}

/** Sets or replaces single conditions, keeping every other entry as it is. */
export function withConditions(
  previous: readonly Condition[] | undefined,
  updates: Readonly<Record<string, DesiredCondition>>,
  now: string,
): readonly Condition[] {
  const seen = new Set<string>();
  const out: Condition[] = [];
  for (const c of previous ?? []) {
    if (seen.has(c.type)) continue;
    seen.add(c.type);
    const desired = updates[c.type];
    if (desired === undefined) {
      out.push(c);
      continue;
    }
    const transition = c.status === desired.status ? (c.last_transition_time ?? now) : now;
    out.push({ type: c.type, ...desired, last_transition_time: transition });
  }
  for (const [type, desired] of Object.entries(updates)) {
    if (!seen.has(type)) out.push({ type, ...desired, last_transition_time: now });
  }
  // Over the limit, foreign entries give way before the ones just written.
  while (out.length > MAX_CONDITIONS) {
    const victim = out.map((c) => c.type in updates).lastIndexOf(false);
    out.splice(victim === -1 ? out.length - 1 : victim, 1);
  }
  return out;
}
