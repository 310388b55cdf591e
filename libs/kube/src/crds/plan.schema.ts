// PostgresPolicyPlan: a computed reconciliation plan; approval binds to status.changeDigest.
// Decision rules 1-5 of the spec live on status; origin immutability lives on spec.
import { Type } from '@sinclair/typebox';
import {
  DECISION_MESSAGES,
  DECISION_WITH_IDENTITY_RULE,
  MUTUALLY_EXCLUSIVE_RULE,
  PLAN_TERMINAL_RULE,
  writeOnceRule,
} from './decision-rules.js';
import { Bool, celRules, Doc, Int64, List, Nullable, Opt, Str, StringEnum } from './schema-builders.js';
import { ChangeSummary, Condition, Identity, RECONCILIATION_MODES } from './value-types.js';

/** Message of the origin rule (the spec: "immutable once set"). */
export const PLAN_ORIGIN_IMMUTABLE = 'plan origin is immutable once set';

/** Plan status fields that are write-once once set (spec decision rule 5). */
export const PLAN_WRITE_ONCE_FIELDS = [
  'changeDigest',
  'changeDigestEncoding',
  'targetPhysicalIdentity',
  'targetLogicalFingerprint',
  'physicalIdentityAvailable',
] as const;

/** PostgresPolicyPlan.spec. */
export const PostgresPolicyPlanSpec = Type.Object(
  {
    managedDatabaseIdentity: Doc('Identity of the managed database at plan time.', Str()),
    policyGeneration: Doc('The policy generation at plan time.', Int64()),
    policyRef: Type.Object({ name: Str({ max: 253 }) }),
    reconciliationMode: Doc(
      'Reconciliation mode the plan was computed under.',
      StringEnum(RECONCILIATION_MODES),
    ),
    ownedRoles: Opt(List(Str(), { default: [] })),
    ownedSchemas: Opt(List(Str(), { default: [] })),
    origin: Opt(
      Nullable(
        Type.Object({
          kind: Str({ max: 63 }),
          name: Str({ max: 253 }),
          uid: Str({ max: 63 }),
          baseContentDigest: Opt(Str({ max: 128 })),
          contentDigest: Opt(Str({ max: 128 })),
          contentDigestEncoding: Opt(Str({ max: 64 })),
          policyUid: Opt(Str({ max: 63 })),
        }),
      ),
    ),
    scope: Opt(
      Nullable(
        Type.Object({
          bundleHash: Str(),
          kind: Str(),
          operation: StringEnum(['Activate', 'Revoke'] as const),
        }),
      ),
    ),
  },
  celRules([{ rule: writeOnceRule('origin'), message: PLAN_ORIGIN_IMMUTABLE }]),
);

/** PostgresPolicyPlan.status, where the decision rules are enforced. */
export const PostgresPolicyPlanStatus = Type.Object(
  {
    phase: Opt(
      StringEnum(
        ['Pending', 'Approved', 'Applying', 'Applied', 'Failed', 'Superseded', 'Rejected'] as const,
        {
          default: 'Pending',
        },
      ),
    ),
    conditions: Opt(List(Condition, { max: 16 })),
    decidedBy: Opt(
      Doc(
        'Identity that approved or denied the plan; written together with the decision, write-once.',
        Nullable(Identity),
      ),
    ),
    changeDigest: Opt(
      Doc(
        "Canonical digest of the plan's typed effects: the approval identity. Write-once.",
        Nullable(Str({ max: 128 })),
      ),
    ),
    changeDigestEncoding: Opt(
      Doc(
        'Encoding tag of changeDigest; digests under different tags never compare. Write-once.',
        Nullable(Str({ max: 64 })),
      ),
    ),
    changeSummary: Opt(Nullable(ChangeSummary)),
    computedAt: Opt(Nullable(Str())),
    appliedAt: Opt(Nullable(Str())),
    applyingSince: Opt(Nullable(Str())),
    failedAt: Opt(Nullable(Str())),
    revalidatedAt: Opt(Nullable(Str())),
    revalidatedGeneration: Opt(Nullable(Int64())),
    lastError: Opt(Nullable(Str())),
    passwordSourceDigest: Opt(Nullable(Str())),
    physicalIdentityAvailable: Opt(
      Doc(
        'Whether the physical identity was readable at compute time. Write-once.',
        Nullable(Type.Boolean()),
      ),
    ),
    targetPhysicalIdentity: Opt(
      Doc('System identifier read at compute time. Write-once.', Nullable(Str({ max: 128 }))),
    ),
    targetLogicalFingerprint: Opt(
      Doc('Fingerprint of host, port and database. Write-once.', Nullable(Str({ max: 71 }))),
    ),
    redactedSqlHash: Opt(Nullable(Str())),
    sqlHash: Opt(Nullable(Str())),
    sqlInline: Opt(Nullable(Str())),
    sqlRef: Opt(
      Nullable(
        Type.Object({ key: Str(), name: Str(), compression: Opt(Nullable(StringEnum(['gzip'] as const))) }),
      ),
    ),
    sqlOriginalBytes: Opt(Nullable(Int64())),
    sqlStoredBytes: Opt(Nullable(Int64())),
    sqlStatements: Opt(Nullable(Int64())),
    sqlTruncated: Opt(
      Doc('True when the SQL preview was truncated to fit object size limits.', Bool({ default: false })),
    ),
  },
  celRules([
    { rule: MUTUALLY_EXCLUSIVE_RULE, message: DECISION_MESSAGES.mutuallyExclusive },
    { rule: PLAN_TERMINAL_RULE, message: DECISION_MESSAGES.planTerminal },
    { rule: writeOnceRule('decidedBy'), message: DECISION_MESSAGES.identityWriteOnce },
    { rule: DECISION_WITH_IDENTITY_RULE, message: DECISION_MESSAGES.planTogether },
    ...PLAN_WRITE_ONCE_FIELDS.map((f) => ({
      rule: writeOnceRule(f),
      message: DECISION_MESSAGES.writeOnce(f),
    })),
  ]),
);
