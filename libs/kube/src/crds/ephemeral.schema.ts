// EphemeralAccessPolicy (a requestable bundle of memberships) and EphemeralAccessRequest (a bounded ask for it).
// Request rules: immutable spec, write-once resolvedAccess and activatedAt, terminal decisions with decidedBy.
import { Type } from '@sinclair/typebox';
import {
  DECISION_MESSAGES,
  DECISION_WITH_IDENTITY_RULE,
  MUTUALLY_EXCLUSIVE_RULE,
  REQUEST_TERMINAL_RULE,
  writeOnceRule,
} from './decision-rules.js';
import { Bool, celRules, Doc, Int64, List, Nullable, Opt, Str, StringEnum } from './schema-builders.js';
import { AccessCondition, Duration, Identity, NameRef, RoleName } from './value-types.js';

/** Messages of the request rules that the spec words itself, plus its list of allowed condition types. */
export const REQUEST_MESSAGES = {
  specImmutable: 'request spec is immutable',
  resolvedAccessWriteOnce: 'resolvedAccess is write-once',
  activatedAtWriteOnce: 'activatedAt is write-once',
  conditionTypes: 'request conditions must use a declared lifecycle or decision type',
} as const;

/** Condition types a request status may carry. */
export const REQUEST_CONDITION_TYPES = ['Approved', 'Denied', 'Resolved', 'Ready', 'Applied'] as const;

/** EphemeralAccessPolicy.spec. */
export const EphemeralAccessPolicySpec = Type.Object({
  approval: Type.Object({ mode: StringEnum(['Automatic', 'Required'] as const) }),
  justification: Type.Object({ required: Type.Boolean() }),
  maximumDuration: Doc('Longest permitted access duration.', Duration()),
  defaultDuration: Opt(Doc('Used when a request omits requestedDuration.', Nullable(Duration()))),
  memberships: List(Type.Object({ inherit: Type.Boolean(), role: RoleName }), { min: 1, max: 32 }),
  pendingRequestTTL: Opt(Doc('Time a pending request has to receive approval.', Duration('15m'))),
  postgresPolicyRef: Doc('PostgresPolicy in the same namespace managing the target database.', NameRef),
  suspend: Opt(Bool({ default: false })),
  allowPrivilegedRoles: Opt(
    Doc(
      'Extension (ADR 0021): bundle roles may be privileged (SUPERUSER, CREATEROLE, BYPASSRLS, REPLICATION, ' +
        'a predefined pg_* role, or a member of one). Takes effect only in namespaces the operator lists in ' +
        'EPHEMERAL_ACCESS_PRIVILEGED_NAMESPACES.',
      Bool({ default: false }),
    ),
  ),
  displayName: Opt(Nullable(Str({ max: 128 }))),
  description: Opt(Nullable(Str({ max: 2048 }))),
});

/** EphemeralAccessPolicy.status. */
export const EphemeralAccessPolicyStatus = Type.Object({
  conditions: Opt(List(AccessCondition, { max: 16 })),
  observedGeneration: Opt(Nullable(Int64())),
  resolvedRoles: Opt(List(RoleName, { max: 32, default: [] })),
});

/** EphemeralAccessRequest.spec (immutable as a whole). */
export const EphemeralAccessRequestSpec = Type.Object(
  {
    accessPolicyRef: Doc('EphemeralAccessPolicy in the same namespace.', NameRef),
    subject: Doc('Existing role receiving the temporary memberships.', Type.Object({ role: RoleName })),
    requestedBy: Doc(
      'Requester identity; overwritten from the authenticated caller when an admission layer is installed.',
      Identity,
    ),
    requestedDuration: Opt(
      Doc('Requested duration; omission uses the policy default.', Nullable(Duration())),
    ),
    justification: Opt(Nullable(Str({ max: 2048 }))),
  },
  celRules([{ rule: 'self == oldSelf', message: REQUEST_MESSAGES.specImmutable }]),
);

const Membership = Type.Object({ inherit: Type.Boolean(), member: RoleName, role: RoleName });

/** The write-once snapshot a decision binds to. */
export const ResolvedAccess = Type.Object({
  accessPolicyGeneration: Int64(),
  accessPolicyUid: Str({ max: 128 }),
  bundleEncoding: Str({ max: 128 }),
  bundleHash: Str({ max: 71 }),
  grantedDuration: Str({ max: 64 }),
  memberships: List(Membership, { max: 32 }),
  targetDatabaseFingerprint: Str({ max: 71 }),
  targetPolicyGeneration: Int64(),
  targetPolicyUid: Str({ max: 128 }),
});

/** EphemeralAccessRequest.status, where the request decision rules are enforced. */
export const EphemeralAccessRequestStatus = Type.Object(
  {
    phase: Opt(
      StringEnum(
        [
          'Pending',
          'PendingApproval',
          'Applying',
          'Active',
          'Revoking',
          'Ended',
          'Revoked',
          'Cancelled',
          'Denied',
          'ApprovalExpired',
          'Failed',
        ] as const,
        { default: 'Pending' },
      ),
    ),
    conditions: Opt(
      List(AccessCondition, {
        max: 8,
        rules: [
          {
            rule: `self.all(c, c.type in [${REQUEST_CONDITION_TYPES.map((t) => `'${t}'`).join(', ')}])`,
            message: REQUEST_MESSAGES.conditionTypes,
          },
        ],
      }),
    ),
    decidedBy: Opt(Nullable(Identity)),
    activatedAt: Opt(Nullable(Str({ max: 64 }))),
    approvalExpiresAt: Opt(Nullable(Str({ max: 64 }))),
    endedAt: Opt(Nullable(Str({ max: 64 }))),
    expiresAt: Opt(Nullable(Str({ max: 64 }))),
    lastError: Opt(Nullable(Str({ max: 4096 }))),
    resolvedAccess: Opt(
      Doc('Snapshot of the bundle recorded before approval; write-once.', Nullable(ResolvedAccess)),
    ),
    retainedMemberships: Opt(
      Doc(
        'Memberships kept because another active request or the base policy still requires them.',
        List(Membership, { max: 32, default: [] }),
      ),
    ),
  },
  celRules([
    { rule: writeOnceRule('resolvedAccess'), message: REQUEST_MESSAGES.resolvedAccessWriteOnce },
    // The start of the access clock (ADR 0020): a later activatedAt would prolong access.
    { rule: writeOnceRule('activatedAt'), message: REQUEST_MESSAGES.activatedAtWriteOnce },
    { rule: MUTUALLY_EXCLUSIVE_RULE, message: DECISION_MESSAGES.mutuallyExclusive },
    { rule: REQUEST_TERMINAL_RULE, message: DECISION_MESSAGES.requestTerminal },
    { rule: writeOnceRule('decidedBy'), message: DECISION_MESSAGES.identityWriteOnce },
    { rule: DECISION_WITH_IDENTITY_RULE, message: DECISION_MESSAGES.requestTogether },
  ]),
);
