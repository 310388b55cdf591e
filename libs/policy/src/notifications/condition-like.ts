// The shape of a status condition as the notifier reads it from plans and requests, shared by the occurrences
// and the approve commands derived from them.

/** A status condition as plans (snake_case time) and requests (camelCase time) carry it. */
export interface ConditionLike {
  readonly type: string;
  readonly status: string;
  readonly reason?: string | null;
  readonly last_transition_time?: string | null;
  readonly lastTransitionTime?: string | null;
}
