// The review artifact v2 (spec "Review artifact (JSON document)") as TypeBox schemas: the TypeScript types
// and the published JSON Schema (deploy/schemas/review-artifact.v2.json) both come from here.
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { OBJECT_TYPES, PHASES, PRIVILEGES, RECONCILIATION_MODES } from '@rolepolicy/policy';

/** `schema_version` of the document. */
export const REVIEW_ARTIFACT_SCHEMA_VERSION = 'rolepolicy.review-artifact.v2';
/** `recorded.visual.schema_version`: the graph's own version string. */
export const ROLE_GRAPH_SCHEMA_VERSION = 'rolepolicy.role-graph.v1';
/** `$id` of the published JSON Schema. */
export const REVIEW_ARTIFACT_SCHEMA_ID = 'https://rolepolicy.io/schemas/review-artifact.v2.json';

/** Every object in the artifact is closed: the spec forbids extra properties at the top level, we do everywhere. */
function Closed<P extends Record<string, TSchema>>(properties: P, description?: string) {
  return Type.Object(properties, {
    additionalProperties: false,
    ...(description !== undefined ? { description } : {}),
  });
}

function Enum<const V extends readonly string[]>(values: V) {
  return Type.Unsafe<V[number]>({ type: 'string', enum: [...values] });
}

function OrNull<T extends TSchema>(schema: T) {
  return Type.Union([schema, Type.Null()]);
}

const Uint = Type.Integer({ minimum: 0 });
const Int32 = Type.Integer({ minimum: -2147483648, maximum: 2147483647 });
const Name = Type.String({ minLength: 1 });
const PrivilegeSchema = Enum(PRIVILEGES);
const Privileges = Type.Array(PrivilegeSchema, { uniqueItems: true, minItems: 1 });
const ObjectTypeSchema = Enum(OBJECT_TYPES);

export const DefaultScopeSchema = Type.Union([
  Closed({ type: Type.Literal('global') }),
  Closed({ type: Type.Literal('schema'), schema: Name }),
]);

export const IdentitySchema = Closed({ role: Type.String(), superuser: OrNull(Type.Boolean()) });

export const ManagedScopeSchema = OrNull(
  Closed({
    roles: Type.Array(Type.String()),
    schemas: Type.Array(Closed({ name: Type.String(), owner: Type.Boolean(), bindings: Type.Boolean() })),
  }),
);

export const ProvenanceSchema = Closed({
  tool_version: Type.String({ minLength: 1 }),
  captured_at: Type.String({ format: 'date-time', description: 'caller-supplied RFC 3339 timestamp' }),
  policy: Closed({
    content_digest: Type.String({ pattern: '^sha256:[0-9a-f]{64}$' }),
    commit: Type.Optional(OrNull(Type.String())),
  }),
  target_label: Type.String({ minLength: 1, description: 'human-readable label, never a connection URL' }),
  pg_major_version: Int32,
});

export const ContextSchema = Closed({
  mode: Enum(RECONCILIATION_MODES),
  inspector: IdentitySchema,
  intended_executor: IdentitySchema,
  authority_graph_complete: Type.Boolean(),
  managed_scope: ManagedScopeSchema,
});

export const PREFLIGHT_CHECKS = ['executor_authority', 'role_drop_safety', 'server_compatibility'] as const;
export const PREFLIGHT_STATUSES = ['passed', 'failed', 'not_run', 'unknown'] as const;
export const COVERAGE_CHECKS = [
  'default_privilege_owner',
  'predefined_role_membership',
  'grantor_reachability',
  'revoke_acl_ownership',
  'plan_order_authority',
  'drop_role_safety',
] as const;

export const CoverageSchema = Closed({
  kind: Enum(['complete', 'targeted'] as const),
  checks_performed: Type.Array(Enum(COVERAGE_CHECKS), { uniqueItems: true }),
  checked_change_indices: Type.Array(Uint),
  unchecked_change_indices: Type.Array(Uint),
});

export const PreflightIssueSchema = Closed({
  code: Type.String({ minLength: 1 }),
  message: Type.String(),
  role: OrNull(Type.String()),
});

export const PreflightSchema = Closed({
  check: Enum(PREFLIGHT_CHECKS),
  status: Enum(PREFLIGHT_STATUSES),
  issue_count: Uint,
  coverage: CoverageSchema,
  actor_role: Type.Optional(OrNull(Type.String())),
  issues: Type.Array(PreflightIssueSchema),
});

const BOOLEAN_ATTRIBUTES = [
  'login',
  'superuser',
  'createdb',
  'createrole',
  'inherit',
  'replication',
  'bypassrls',
] as const;

export const AttributeSchema = Type.Union([
  Closed({ kind: Enum(BOOLEAN_ATTRIBUTES), value: Type.Boolean() }),
  Closed({ kind: Type.Literal('connection_limit'), value: Int32 }),
  Closed({ kind: Type.Literal('valid_until'), value: Type.Optional(OrNull(Type.String())) }),
  Closed({ kind: Enum(['set_config', 'reset_config'] as const), parameter: Type.String({ minLength: 1 }) }),
]);

const grantFields = {
  role: Name,
  privileges: Privileges,
  object_type: ObjectTypeSchema,
  name: Type.Optional(OrNull(Type.String())),
  schema: Type.Optional(OrNull(Type.String())),
};

export const ArtifactChangeSchema = Type.Union([
  Closed({
    kind: Type.Literal('create_role'),
    name: Name,
    state: Closed({
      login: Type.Boolean(),
      superuser: Type.Boolean(),
      createdb: Type.Boolean(),
      createrole: Type.Boolean(),
      inherit: Type.Boolean(),
      replication: Type.Boolean(),
      bypassrls: Type.Boolean(),
      connection_limit: Int32,
      comment_present: Type.Boolean(),
      config_parameters: Type.Array(Type.String()),
      password_valid_until: Type.Optional(OrNull(Type.String())),
    }),
  }),
  Closed({ kind: Type.Literal('create_schema'), name: Name, owner: Type.Optional(OrNull(Type.String())) }),
  Closed({ kind: Type.Literal('alter_schema_owner'), name: Name, owner: Name }),
  Closed({
    kind: Type.Literal('ensure_schema_owner_privileges'),
    name: Name,
    owner: Name,
    privileges: Privileges,
  }),
  Closed({ kind: Type.Literal('alter_role'), name: Name, attributes: Type.Array(AttributeSchema) }),
  Closed({ kind: Type.Literal('set_comment'), name: Name, comment_present: Type.Boolean() }),
  Closed({ kind: Type.Literal('grant'), ...grantFields }),
  Closed({ kind: Type.Literal('revoke'), ...grantFields, grantor: Type.Optional(OrNull(Type.String())) }),
  Closed({
    kind: Enum(['set_default_privilege', 'revoke_default_privilege'] as const),
    owner: Name,
    scope: DefaultScopeSchema,
    on_type: ObjectTypeSchema,
    grantee: Name,
    privileges: Privileges,
  }),
  Closed({
    kind: Type.Literal('add_member'),
    role: Name,
    member: Name,
    inherit: Type.Boolean(),
    admin: Type.Boolean(),
  }),
  Closed({
    kind: Type.Literal('remove_member'),
    role: Name,
    member: Name,
    grantor: Type.Optional(OrNull(Type.String())),
  }),
  Closed({ kind: Type.Literal('reassign_owned'), from_role: Name, to_role: Name }),
  Closed({ kind: Enum(['drop_owned', 'terminate_sessions'] as const), role: Name }),
  Closed({ kind: Enum(['set_password', 'drop_role'] as const), name: Name }),
]);

export const ManagedKeySchema = Type.Union([
  Closed({ kind: Type.Literal('role'), name: Name }),
  Closed({ kind: Type.Literal('schema_facet'), schema: Name, facet: Enum(['owner', 'bindings'] as const) }),
  Closed({
    kind: Type.Literal('grant'),
    role: Name,
    object_type: ObjectTypeSchema,
    name: OrNull(Type.String()),
    schema: OrNull(Type.String()),
  }),
  Closed({
    kind: Type.Literal('default_privilege'),
    owner: Name,
    scope: DefaultScopeSchema,
    on_type: ObjectTypeSchema,
    grantee: Name,
  }),
  Closed({ kind: Type.Literal('membership'), role: Name, member: Name }),
]);

export const OmissionSchema = Closed({
  field: Type.String({ minLength: 1 }),
  reason: Type.Literal('sensitive_value'),
});

export const PRIORITIES = ['High', 'Review', 'Informational'] as const;

export const RecordedChangeSchema = Closed({
  index: Uint,
  priority: Enum(PRIORITIES),
  change: ArtifactChangeSchema,
  source: Type.Optional(OrNull(Closed({ document: Type.String(), managed_key: ManagedKeySchema }))),
  omissions: Type.Optional(Type.Array(OmissionSchema)),
});

export const ACCESS_STATUSES = ['reachable', 'unreachable', 'unknown'] as const;

export const AccessDeltaSchema = Closed({
  changed: Type.Array(Closed({ role: Type.String(), status: Enum(ACCESS_STATUSES) })),
  removed: Type.Array(Type.String()),
});

export const PhaseRecordSchema = Closed({
  phase: Enum(PHASES),
  change_indices: Type.Array(Uint),
  executor_reachability_delta: AccessDeltaSchema,
  executor_usage_delta: AccessDeltaSchema,
});

export const FINDING_KINDS = [
  'required_role_unavailable',
  'required_role_reachability_unknown',
  'executor_loses_access',
  'membership_disconnects_role',
  'role_becomes_reachable',
  'database_preflight_required',
  'superuser_required',
  'ownership_transfer_changes_grantor',
] as const;
export const SEVERITIES = ['info', 'warning', 'error'] as const;

export const FindingSchema = Closed({
  kind: Enum(FINDING_KINDS),
  severity: Enum(SEVERITIES),
  message: Type.String(),
  change_index: OrNull(Uint),
  change_indices: Type.Array(Uint),
  phase: Type.Optional(OrNull(Enum(PHASES))),
  role: Type.Optional(OrNull(Type.String())),
});

export const NODE_KINDS = ['role', 'external_principal', 'grant_target', 'default_privilege_target'] as const;
export const EDGE_KINDS = ['membership', 'grant', 'default_privilege'] as const;

export const VisualSchema = Closed({
  schema_version: Type.String(),
  meta: Closed({
    source: Enum(['desired', 'current'] as const),
    role_count: Uint,
    grant_count: Uint,
    default_privilege_count: Uint,
    membership_count: Uint,
    collapsed: Type.Boolean(),
    managed_scope: ManagedScopeSchema,
  }),
  nodes: Type.Array(
    Closed({
      id: Type.String(),
      label: Type.String(),
      kind: Enum(NODE_KINDS),
      login: OrNull(Type.Boolean()),
      managed: OrNull(Type.Boolean()),
      privileges: Type.Array(Type.String()),
    }),
  ),
  edges: Type.Array(
    Closed({ source: Type.String(), target: Type.String(), kind: Enum(EDGE_KINDS), label: Type.String() }),
  ),
});

export const SqlPreviewSchema = Type.Union([
  Closed({ status: Type.Literal('available'), sql: Type.String() }),
  Closed({
    status: Type.Literal('omitted'),
    reason: Type.Literal('sensitive_changes'),
    sensitive_change_indices: Type.Array(Uint, { minItems: 1 }),
  }),
]);

export const RecordedSchema = Closed({
  changes: Type.Array(RecordedChangeSchema),
  phases: Type.Array(PhaseRecordSchema),
  findings: Type.Array(FindingSchema),
  omissions: Type.Optional(Type.Array(OmissionSchema)),
  visual: VisualSchema,
  sql_preview: SqlPreviewSchema,
  review_fingerprint: Type.String({ pattern: '^sha256:[0-9a-f]{64}$' }),
});

export const ExplorationSchema = Closed({
  status: Type.Literal('omitted'),
  reason: Enum(['recorded_only_export', 'sensitive_inputs_removed'] as const),
});

/** The whole document. */
export const ReviewArtifactSchema = Type.Object(
  {
    schema_version: Type.Literal(REVIEW_ARTIFACT_SCHEMA_VERSION),
    provenance: ProvenanceSchema,
    context: ContextSchema,
    preflight: Type.Array(PreflightSchema),
    recorded: RecordedSchema,
    exploration: ExplorationSchema,
  },
  {
    additionalProperties: false,
    $id: REVIEW_ARTIFACT_SCHEMA_ID,
    title: 'rolepolicy review artifact v2',
  },
);

export type ReviewArtifact = Static<typeof ReviewArtifactSchema>;
export type Provenance = Static<typeof ProvenanceSchema>;
export type ReviewContext = Static<typeof ContextSchema>;
export type Identity = Static<typeof IdentitySchema>;
export type ArtifactManagedScope = Static<typeof ManagedScopeSchema>;
export type Preflight = Static<typeof PreflightSchema>;
export type PreflightCheck = (typeof PREFLIGHT_CHECKS)[number];
export type PreflightStatus = (typeof PREFLIGHT_STATUSES)[number];
export type CoverageCheck = (typeof COVERAGE_CHECKS)[number];
export type Coverage = Static<typeof CoverageSchema>;
export type PreflightIssue = Static<typeof PreflightIssueSchema>;
export type ArtifactChange = Static<typeof ArtifactChangeSchema>;
export type ArtifactAttribute = Static<typeof AttributeSchema>;
export type ManagedKey = Static<typeof ManagedKeySchema>;
export type Omission = Static<typeof OmissionSchema>;
export type Priority = (typeof PRIORITIES)[number];
export type RecordedChange = Static<typeof RecordedChangeSchema>;
export type AccessStatus = (typeof ACCESS_STATUSES)[number];
export type AccessDelta = Static<typeof AccessDeltaSchema>;
export type PhaseRecord = Static<typeof PhaseRecordSchema>;
export type FindingKind = (typeof FINDING_KINDS)[number];
export type Severity = (typeof SEVERITIES)[number];
export type Finding = Static<typeof FindingSchema>;
export type Visual = Static<typeof VisualSchema>;
export type VisualNode = Visual['nodes'][number];
export type VisualEdge = Visual['edges'][number];
export type SqlPreview = Static<typeof SqlPreviewSchema>;
export type Recorded = Static<typeof RecordedSchema>;
export type Exploration = Static<typeof ExplorationSchema>;
