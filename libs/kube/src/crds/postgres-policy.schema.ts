// PostgresPolicy: the desired state for one database connection, with API-server defaults applied.
// Spec = content blocks (defaulted) + connection and reconcile settings; status is controller-owned.
import { Type } from '@sinclair/typebox';
import { contentBlocks } from './content-schemas.js';
import {
  Bool,
  celRules,
  Doc,
  Int32,
  Int64,
  List,
  MapOf,
  Nullable,
  Opt,
  Str,
  StringEnum,
} from './schema-builders.js';
import {
  ChangeSummary,
  Condition,
  DURATION_PATTERN,
  ParamSecretRef,
  RECONCILIATION_MODES,
} from './value-types.js';

/** Messages of the connection admission rules. */
export const CONNECTION_MESSAGES = {
  secretRefXorParams: 'secretRef and params are mutually exclusive',
  paramPair: (field: string) => `${field} and ${field}Secret are mutually exclusive`,
} as const;

/** Params parts that come either as a literal or as a `<part>Secret` reference. */
const PARAM_PARTS = ['host', 'port', 'dbname', 'username', 'password', 'sslMode'] as const;

const ConnectionParams = Type.Object(
  {
    host: Opt(Nullable(Str())),
    hostSecret: Opt(Nullable(ParamSecretRef)),
    port: Opt(Nullable(Type.Integer({ minimum: 0, maximum: 65535 }))),
    portSecret: Opt(Nullable(ParamSecretRef)),
    dbname: Opt(Nullable(Str())),
    dbnameSecret: Opt(Nullable(ParamSecretRef)),
    username: Opt(Nullable(Str())),
    usernameSecret: Opt(Nullable(ParamSecretRef)),
    password: Opt(Nullable(Str())),
    passwordSecret: Opt(Nullable(ParamSecretRef)),
    sslMode: Opt(Nullable(Str())),
    sslModeSecret: Opt(Nullable(ParamSecretRef)),
    setRole: Opt(
      Doc(
        'SET ROLE run on every pooled connection, to switch to a privileged group role.',
        Nullable(Str({ pattern: '^[A-Za-z_][A-Za-z0-9_$-]*$' })),
      ),
    ),
    auth: Opt(
      Nullable(
        Type.Object({
          type: StringEnum(['cloud_workload_identity'] as const),
          impersonateServiceAccount: Opt(Nullable(Str())),
          scope: Opt(Nullable(Str())),
        }),
      ),
    ),
  },
  celRules(
    PARAM_PARTS.map((p) => ({
      rule: `!(has(self.${p}) && has(self.${p}Secret))`,
      message: CONNECTION_MESSAGES.paramPair(p),
    })),
  ),
);

/** `spec.connection`: a Secret holding a URL, or structured params. */
export const Connection = Type.Object(
  {
    secretRef: Opt(
      Doc(
        'Secret holding a connection URL. Mutually exclusive with params.',
        Nullable(Type.Object({ name: Str({ min: 1, max: 253 }) })),
      ),
    ),
    secretKey: Opt(
      Doc(
        'Key of the connection URL in the Secret; used only with secretRef.',
        Nullable(Str({ min: 1, max: 253, default: 'DATABASE_URL' })),
      ),
    ),
    params: Opt(
      Doc(
        'Structured connection parts, each a literal or a Secret reference. Mutually exclusive with secretRef.',
        Nullable(ConnectionParams),
      ),
    ),
    requirePhysicalIdentity: Opt(
      Doc(
        'Refuse planning and execution unless pg_control_system().system_identifier is readable.',
        Nullable(Type.Boolean()),
      ),
    ),
  },
  celRules([
    { rule: '!(has(self.secretRef) && has(self.params))', message: CONNECTION_MESSAGES.secretRefXorParams },
  ]),
);

const content = contentBlocks(true);

/** PostgresPolicy.spec. */
export const PostgresPolicySpec = Type.Object({
  connection: Doc(
    'Database connection: a Secret holding a URL (secretRef) or structured params.',
    Connection,
  ),
  mode: Opt(
    Doc(
      'apply executes SQL; observe computes drift only; plan is an alias of observe.',
      StringEnum(['apply', 'observe', 'plan'] as const, { default: 'apply' }),
    ),
  ),
  approval: Opt(
    Doc(
      'manual or auto. Should be set: when omitted it is inferred from mode (deprecated, condition ApprovalUnset).',
      Nullable(StringEnum(['manual', 'auto'] as const)),
    ),
  ),
  reconciliation_mode: Opt(
    Doc(
      'authoritative revokes undeclared managed privileges and drops undeclared roles; additive only grants; adopt never drops undeclared roles.',
      StringEnum(RECONCILIATION_MODES, { default: 'authoritative' }),
    ),
  ),
  interval: Opt(
    Doc('Reconcile interval, e.g. 5m or 1h.', Str({ max: 64, pattern: DURATION_PATTERN, default: '5m' })),
  ),
  suspend: Opt(Doc('When true, reconciliation is suspended.', Bool({ default: false }))),
  allow_schema_owner_transfers: Opt(
    Doc('Permits adopt mode to transfer schema ownership.', Bool({ default: false })),
  ),
  ...content.fields,
});

/** PostgresPolicy.status (controller-owned). */
export const PostgresPolicyStatus = Type.Object({
  applied_password_source_versions: Opt(MapOf(Str(), { default: {} })),
  change_summary: Opt(Nullable(ChangeSummary)),
  conditions: Opt(List(Condition, { max: 16, default: [] })),
  content_digest: Opt(
    Doc(
      "Canonical digest of the policy content; compared with candidates' status.contentDigest.",
      Nullable(Str({ max: 128 })),
    ),
  ),
  current_plan_ref: Opt(Nullable(Type.Object({ name: Str() }))),
  lastHandledReconcileAt: Opt(Nullable(Str())),
  last_attempted_generation: Opt(Nullable(Int64())),
  last_error: Opt(Nullable(Str())),
  last_reconcile_mode: Opt(Nullable(StringEnum(['apply', 'observe', 'plan'] as const))),
  last_successful_reconcile_time: Opt(Nullable(Str())),
  managed_database_identity: Opt(Nullable(Str())),
  observed_generation: Opt(Doc('Last successfully reconciled generation.', Nullable(Int64()))),
  owned_roles: Opt(List(Str(), { default: [] })),
  owned_schemas: Opt(List(Str(), { default: [] })),
  plan_warnings: Opt(
    Doc(
      'Advisory warnings of the last plan, populated even when it applied cleanly.',
      List(Str(), { default: [] }),
    ),
  ),
  transient_failure_count: Opt(
    Doc('Consecutive transient failures, used for exponential backoff.', Int32({ default: 0 })),
  ),
});
