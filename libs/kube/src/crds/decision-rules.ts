// CEL text of the decision rules shared by plan and request status (Approved/Denied, decidedBy, write-once).
// Rules read absent-or-null fields as unset, so an explicit null never satisfies "recorded".

/** Condition types that record a decision. */
export const DECISION_TYPES = ['Approved', 'Denied'] as const;

const decisionFilter = "c.type in ['Approved', 'Denied'] && c.status == 'True'";

/** True when `v` (self or oldSelf) carries a terminal decision condition. */
export function hasDecision(v: 'self' | 'oldSelf'): string {
  return `(has(${v}.conditions) && ${v}.conditions.exists(c, ${decisionFilter}))`;
}

/** Approved=True and Denied=True may not both be present. */
export const MUTUALLY_EXCLUSIVE_RULE =
  "!has(self.conditions) || !(self.conditions.exists(c, c.type == 'Approved' && c.status == 'True') && " +
  "self.conditions.exists(c, c.type == 'Denied' && c.status == 'True'))";

/** Once decided, the list of True decision types stays the same (plans: messages/timestamps may change). */
export const PLAN_TERMINAL_RULE =
  `!${hasDecision('oldSelf')} || (has(self.conditions) && ` +
  `self.conditions.filter(c, ${decisionFilter}).map(c, c.type) == ` +
  `oldSelf.conditions.filter(c, ${decisionFilter}).map(c, c.type))`;

/** Once decided, the True decision condition objects stay identical (requests freeze them entirely). */
export const REQUEST_TERMINAL_RULE =
  `!${hasDecision('oldSelf')} || (has(self.conditions) && ` +
  `self.conditions.filter(c, ${decisionFilter}) == oldSelf.conditions.filter(c, ${decisionFilter}))`;

/** A decision and decidedBy exist together or not at all. */
export const DECISION_WITH_IDENTITY_RULE = `${hasDecision('self')} == has(self.decidedBy)`;

/** A field that, once set, must stay present and equal. */
export function writeOnceRule(field: string): string {
  return `!has(oldSelf.${field}) || (has(self.${field}) && self.${field} == oldSelf.${field})`;
}

/** Messages shared by plan and request status rules. */
export const DECISION_MESSAGES = {
  mutuallyExclusive: 'Approved=True and Denied=True are mutually exclusive',
  planTerminal: 'plan decisions are terminal',
  requestTerminal: 'approval decisions are terminal',
  identityWriteOnce: 'decision identity is write-once',
  planTogether: 'a terminal plan decision and decidedBy identity must be recorded together',
  requestTogether: 'a terminal approval decision and decidedBy identity must be recorded together',
  writeOnce: (field: string) => `${field} is write-once`,
} as const;
