// The admission conformance suite as data: for every rule and message of the spec, writes that must be
// accepted and writes that must be rejected with the exact field and message. Reused by the emulator suite.
import { CANDIDATE_SPEC_IMMUTABLE } from '../crds/candidate.schema.js';
import { CONTENT_MESSAGES } from '../crds/content-schemas.js';
import { DECISION_MESSAGES } from '../crds/decision-rules.js';
import { REQUEST_MESSAGES } from '../crds/ephemeral.schema.js';
import { PLAN_ORIGIN_IMMUTABLE } from '../crds/plan.schema.js';
import { CONNECTION_MESSAGES } from '../crds/postgres-policy.schema.js';
import type { Kind } from '../constants.js';
import type { JsonObject } from '../admission/prune-defaults.js';
import {
  accessCondition,
  accessPolicy,
  candidate,
  plan,
  planCondition,
  policy,
  request,
  RESOLVED_ACCESS,
  REVIEWER,
} from './fixtures.js';

/** What a write must produce. */
export type StepExpectation =
  | {
      readonly allowed: true;
      /** Subset the stored object must match (defaults the API server applies). */
      readonly stored?: JsonObject;
      /** Dotted paths (`spec.roles.0.external`) that must be absent from the stored object. */
      readonly absent?: readonly string[];
    }
  | {
      readonly allowed: false;
      /** Field path of the error, e.g. `spec.grants[0].object`. */
      readonly field: string;
      /** Text after the field path, e.g. `Invalid value: "object": database grant targets must set name`. */
      readonly body: string;
    };

/**
 * One write. `create` posts the object; `patch` is the body of a JSON merge patch (RFC 7386) against the
 * stored object, sent to the main resource or to `/status` (status patches read `{status: {...}}`).
 * Rejected writes leave the stored object unchanged.
 */
export type ConformanceStep =
  | { readonly op: 'create'; readonly object: JsonObject; readonly expect: StepExpectation }
  | {
      readonly op: 'patch';
      readonly subresource?: 'status';
      readonly patch: JsonObject;
      readonly expect: StepExpectation;
    };

/** A named scenario on one object (all steps use the name of the object created first). */
export interface ConformanceCase {
  /** Test name: the spec rule and what the scenario shows. */
  readonly name: string;
  readonly kind: Kind;
  readonly steps: readonly ConformanceStep[];
}

/** The line a client prints for a rejection: `<field>: <body>`. */
export function expectedErrorLine(e: { readonly field: string; readonly body: string }): string {
  return `${e.field}: ${e.body}`;
}

const ok = (stored?: JsonObject, absent?: readonly string[]): StepExpectation => ({
  allowed: true,
  ...(stored !== undefined ? { stored } : {}),
  ...(absent !== undefined ? { absent } : {}),
});
const invalid = (field: string, message: string, type = 'object'): StepExpectation => ({
  allowed: false,
  field,
  body: `Invalid value: "${type}": ${message}`,
});
const rejected = (field: string, body: string): StepExpectation => ({ allowed: false, field, body });
const create = (object: JsonObject, expect: StepExpectation = ok()): ConformanceStep => ({
  op: 'create',
  object,
  expect,
});
const patch = (p: JsonObject, expect: StepExpectation = ok()): ConformanceStep => ({
  op: 'patch',
  patch: p,
  expect,
});
/** A merge patch to /status; `p` holds status fields and is sent as `{status: p}`. */
const statusPatch = (p: JsonObject, expect: StepExpectation = ok()): ConformanceStep => ({
  op: 'patch',
  subresource: 'status',
  patch: { status: p },
  expect,
});

const dbGrant = (object: JsonObject): JsonObject => ({ object, privileges: ['CONNECT'], role: 'app_rw' });
const defaultPriv = (extra: JsonObject): JsonObject => ({
  ...extra,
  grant: [{ on_type: 'table', privileges: ['SELECT'], role: 'app_ro' }],
});

const contentCases = (kind: 'PostgresPolicy' | 'PostgresPolicyCandidate'): ConformanceCase[] => {
  const make = kind === 'PostgresPolicy' ? policy : candidate;
  const prefix = kind === 'PostgresPolicy' ? 'spec' : 'spec.content';
  const slug = kind === 'PostgresPolicy' ? 'pol' : 'cand';
  const withContent = (name: string, content: JsonObject): JsonObject =>
    kind === 'PostgresPolicy' ? make(name, content) : make(name, { content });
  return [
    {
      name: `${kind}: database grant targets must set name (accepted with name)`,
      kind,
      steps: [
        create(withContent(`${slug}-dbgrant-ok`, { grants: [dbGrant({ type: 'database', name: 'app' })] })),
      ],
    },
    {
      name: `${kind}: database grant targets must set name (rejected without name)`,
      kind,
      steps: [
        create(
          withContent(`${slug}-dbgrant-bad`, { grants: [dbGrant({ type: 'database' })] }),
          invalid(`${prefix}.grants[0].object`, CONTENT_MESSAGES.databaseGrantName),
        ),
      ],
    },
    {
      name: `${kind}: exactly one of schema and scope must be set (schema alone or scope alone accepted)`,
      kind,
      steps: [
        create(
          withContent(`${slug}-dp-ok`, {
            default_privileges: [defaultPriv({ schema: 'app' }), defaultPriv({ scope: { type: 'global' } })],
          }),
        ),
      ],
    },
    {
      name: `${kind}: exactly one of schema and scope must be set (both rejected)`,
      kind,
      steps: [
        create(
          withContent(`${slug}-dp-both`, {
            default_privileges: [defaultPriv({ schema: 'app', scope: { type: 'schema', schema: 'app' } })],
          }),
          invalid(`${prefix}.default_privileges[0]`, CONTENT_MESSAGES.schemaXorScope),
        ),
      ],
    },
    {
      name: `${kind}: exactly one of schema and scope must be set (neither rejected)`,
      kind,
      steps: [
        create(
          withContent(`${slug}-dp-none`, { default_privileges: [defaultPriv({ owner: 'app_owner' })] }),
          invalid(`${prefix}.default_privileges[0]`, CONTENT_MESSAGES.schemaXorScope),
        ),
      ],
    },
    {
      name: `${kind}: scope schema is required when type is schema (accepted with schema, rejected without)`,
      kind,
      steps: [
        create(
          withContent(`${slug}-scope-schema`, {
            default_privileges: [defaultPriv({ scope: { type: 'schema' } })],
          }),
          invalid(`${prefix}.default_privileges[0].scope`, CONTENT_MESSAGES.scopeSchema),
        ),
        create(
          withContent(`${slug}-scope-schema`, {
            default_privileges: [defaultPriv({ scope: { type: 'schema', schema: 'app' } })],
          }),
        ),
      ],
    },
    {
      name: `${kind}: scope schema is forbidden when type is global`,
      kind,
      steps: [
        create(
          withContent(`${slug}-scope-global`, {
            default_privileges: [defaultPriv({ scope: { type: 'global', schema: 'app' } })],
          }),
          invalid(`${prefix}.default_privileges[0].scope`, CONTENT_MESSAGES.scopeSchema),
        ),
      ],
    },
    {
      name: `${kind}: password generate and secretRef are mutually exclusive`,
      kind,
      steps: [
        create(
          withContent(`${slug}-pw`, {
            roles: [{ name: 'app', password: { generate: {}, secretRef: { name: 's' } } }],
          }),
          invalid(`${prefix}.roles[0].password`, CONTENT_MESSAGES.passwordSource),
        ),
        create(
          withContent(`${slug}-pw`, { roles: [{ name: 'app', password: { secretRef: { name: 's' } } }] }),
        ),
      ],
    },
    {
      name: `${kind}: profile grants reject ensure: absent`,
      kind,
      steps: [
        create(
          withContent(`${slug}-profile-absent`, {
            profiles: {
              ro: { grants: [{ ensure: 'absent', object: { type: 'table' }, privileges: ['SELECT'] }] },
            },
          }),
          invalid(`${prefix}.profiles[ro].grants[0]`, CONTENT_MESSAGES.profileGrantAbsent),
        ),
        create(
          withContent(`${slug}-profile-absent`, {
            profiles: {
              ro: { grants: [{ ensure: 'present', object: { type: 'table' }, privileges: ['SELECT'] }] },
            },
          }),
        ),
      ],
    },
    {
      name: `${kind}: role_pattern requires {profile}`,
      kind,
      steps: [
        create(
          withContent(`${slug}-pattern`, { role_pattern: '{schema}_ro' }),
          invalid(`${prefix}.role_pattern`, CONTENT_MESSAGES.rolePatternProfile, 'string'),
        ),
        create(withContent(`${slug}-pattern`, { role_pattern: '{schema}-{profile}' })),
      ],
    },
    {
      name: `${kind}: list-map keys are unique (roles by name, schemas by name, retirements by role)`,
      kind,
      steps: [
        create(
          withContent(`${slug}-keys`, { roles: [{ name: 'app' }, { name: 'app', login: true }] }),
          rejected(`${prefix}.roles[1]`, 'Duplicate value: map[string]interface {}{"name":"app"}'),
        ),
        create(
          withContent(`${slug}-keys`, { schemas: [{ name: 'app' }, { name: 'app' }] }),
          rejected(`${prefix}.schemas[1]`, 'Duplicate value: map[string]interface {}{"name":"app"}'),
        ),
        create(
          withContent(`${slug}-keys`, { retirements: [{ role: 'old' }, { role: 'old', drop_owned: true }] }),
          rejected(`${prefix}.retirements[1]`, 'Duplicate value: map[string]interface {}{"role":"old"}'),
        ),
        create(
          withContent(`${slug}-keys`, {
            roles: [{ name: 'app' }, { name: 'app_ro' }],
            schemas: [{ name: 'app' }, { name: 'audit' }],
            retirements: [{ role: 'old' }, { role: 'older' }],
          }),
        ),
      ],
    },
  ];
};

const writeOnceCases: ConformanceCase[] = (
  [
    ['changeDigest', `sha256:${'a'.repeat(64)}`, `sha256:${'c'.repeat(64)}`],
    ['changeDigestEncoding', 'rolepolicy.io/approval-effect/v1', 'rolepolicy.io/approval-effect/v2'],
    ['targetPhysicalIdentity', '7301234567890123456', '7309999999999999999'],
    ['targetLogicalFingerprint', `sha256:${'d'.repeat(64)}`, `sha256:${'e'.repeat(64)}`],
    ['physicalIdentityAvailable', true, false],
  ] as const
).map(([field, first, second]) => ({
  name: `PostgresPolicyPlan: ${field} is write-once (set once, resent unchanged, change rejected, removal rejected)`,
  kind: 'PostgresPolicyPlan' as const,
  steps: [
    create(plan(`plan-wo-${field.toLowerCase()}`)),
    statusPatch({ [field]: first }),
    statusPatch({ [field]: first, phase: 'Pending' }),
    statusPatch({ [field]: second }, invalid('status', DECISION_MESSAGES.writeOnce(field))),
    statusPatch({ [field]: null }, invalid('status', DECISION_MESSAGES.writeOnce(field))),
  ],
}));

const approvedPlan = { decidedBy: REVIEWER, conditions: [planCondition('Approved', 'True')] };
const approvedRequest = { decidedBy: REVIEWER, conditions: [accessCondition('Approved', 'True')] };

/** Every conformance case, grouped by kind in spec order. */
export const CONFORMANCE_CASES: readonly ConformanceCase[] = [
  // --- Defaults -------------------------------------------------------------------------------------------
  {
    name: 'PostgresPolicy defaults: mode apply, authoritative, 5m, not suspended, empty lists, {} profiles, secretKey DATABASE_URL',
    kind: 'PostgresPolicy',
    steps: [
      create(
        policy('defaults-minimal'),
        ok(
          {
            spec: {
              connection: { secretRef: { name: 'app-db' }, secretKey: 'DATABASE_URL' },
              mode: 'apply',
              reconciliation_mode: 'authoritative',
              interval: '5m',
              suspend: false,
              allow_schema_owner_transfers: false,
              default_privileges: [],
              grants: [],
              memberships: [],
              profiles: {},
              retirements: [],
              roles: [],
              schemas: [],
            },
          },
          ['spec.approval', 'spec.default_owner', 'spec.role_pattern'],
        ),
      ),
    ],
  },
  {
    name: 'PostgresPolicy defaults: generated passwords default length 32, key password, name {policy}-gen-{role}; secretRef key and params port are not defaulted',
    kind: 'PostgresPolicy',
    steps: [
      create(
        policy('defaults-nested', {
          connection: { params: { host: 'db.internal', passwordSecret: { name: 'db', key: 'password' } } },
          roles: [
            { name: 'app', password: { generate: {} } },
            { name: 'svc', password: { secretRef: { name: 'svc-pw' } } },
          ],
          memberships: [{ role: 'app_ro', members: [{ name: 'svc' }] }],
          retirements: [{ role: 'old' }],
        }),
        ok(
          {
            spec: {
              roles: [
                {
                  name: 'app',
                  external: false,
                  preserve_undeclared_grants: false,
                  password: {
                    generate: { length: 32, secretKey: 'password', secretName: '{policy}-gen-{role}' },
                  },
                },
                { name: 'svc', password: { secretRef: { name: 'svc-pw' } } },
              ],
              memberships: [{ role: 'app_ro', exclusive: false, members: [{ name: 'svc' }] }],
              retirements: [{ role: 'old', drop_owned: false, terminate_sessions: false }],
            },
          },
          [
            'spec.connection.params.port',
            'spec.roles.1.password.secretKey',
            'spec.memberships.0.members.0.inherit',
            'spec.memberships.0.members.0.admin',
          ],
        ),
      ),
    ],
  },
  {
    name: 'PostgresPolicyCandidate content is not defaulted',
    kind: 'PostgresPolicyCandidate',
    steps: [
      create(
        candidate('defaults-candidate', {
          content: { roles: [{ name: 'app', password: { generate: {} } }], retirements: [{ role: 'old' }] },
        }),
        ok({ spec: { content: { roles: [{ name: 'app', password: { generate: {} } }] } } }, [
          'spec.content.grants',
          'spec.content.profiles',
          'spec.content.reconciliation_mode',
          'spec.content.roles.0.external',
          'spec.content.roles.0.password.generate.length',
          'spec.content.retirements.0.drop_owned',
        ]),
      ),
    ],
  },
  {
    name: 'EphemeralAccessPolicy and request defaults: pendingRequestTTL 15m, suspend false, requestedBy.groups []',
    kind: 'EphemeralAccessPolicy',
    steps: [create(accessPolicy('defaults-eap'), ok({ spec: { pendingRequestTTL: '15m', suspend: false } }))],
  },
  {
    name: 'EphemeralAccessRequest defaults: requestedBy.groups [] and status phase Pending on first status write',
    kind: 'EphemeralAccessRequest',
    steps: [
      create(
        request('defaults-ear'),
        ok({ spec: { requestedBy: { username: 'alice@example.com', groups: [] } } }),
      ),
      statusPatch({ conditions: [] }, ok({ status: { phase: 'Pending', retainedMemberships: [] } })),
    ],
  },

  {
    name: 'PostgresPolicyPlan defaults: status phase Pending and sqlTruncated false on first status write; ownedRoles/ownedSchemas []',
    kind: 'PostgresPolicyPlan',
    steps: [
      create(plan('defaults-plan'), ok({ spec: { ownedRoles: [], ownedSchemas: [] } }, ['status'])),
      statusPatch(
        { changeDigest: 'sha256:1' },
        ok({ status: { changeDigest: 'sha256:1', phase: 'Pending', sqlTruncated: false } }, [
          'status.decidedBy',
        ]),
      ),
    ],
  },
  {
    name: 'PostgresPolicyCandidate defaults: status phase Pending on first status write',
    kind: 'PostgresPolicyCandidate',
    steps: [
      create(candidate('defaults-cand-status')),
      statusPatch(
        { contentDigest: 'sha256:c' },
        ok({ status: { contentDigest: 'sha256:c', phase: 'Pending' } }),
      ),
    ],
  },
  {
    name: 'PostgresPolicy status defaults: conditions, owned lists and plan_warnings [], maps {}, counters 0',
    kind: 'PostgresPolicy',
    steps: [
      create(policy('defaults-policy-status')),
      statusPatch(
        { change_summary: {} },
        ok({
          status: {
            applied_password_source_versions: {},
            conditions: [],
            owned_roles: [],
            owned_schemas: [],
            plan_warnings: [],
            transient_failure_count: 0,
            change_summary: { grants_added: 0, roles_created: 0, total: 0 },
          },
        }),
      ),
    ],
  },
  {
    name: 'EphemeralAccessPolicy status defaults: resolvedRoles []',
    kind: 'EphemeralAccessPolicy',
    steps: [
      create(accessPolicy('defaults-eap-status')),
      statusPatch({ observedGeneration: 1 }, ok({ status: { observedGeneration: 1, resolvedRoles: [] } })),
    ],
  },

  // --- Content rules (policy and candidate) ---------------------------------------------------------------
  ...contentCases('PostgresPolicy'),
  ...contentCases('PostgresPolicyCandidate'),

  // --- PostgresPolicy field rules -------------------------------------------------------------------------
  {
    name: 'PostgresPolicy: connection secretRef and params are mutually exclusive',
    kind: 'PostgresPolicy',
    steps: [
      create(
        policy('conn-both', { connection: { secretRef: { name: 'db' }, params: { host: 'db' } } }),
        invalid('spec.connection', CONNECTION_MESSAGES.secretRefXorParams),
      ),
      create(policy('conn-both', { connection: { params: { host: 'db', port: 5433 } } })),
    ],
  },
  {
    name: 'PostgresPolicy: each params part is a literal or a Secret reference, not both',
    kind: 'PostgresPolicy',
    steps: [
      create(
        policy('conn-pair', {
          connection: { params: { host: 'db', hostSecret: { name: 'db', key: 'host' } } },
        }),
        invalid('spec.connection.params', CONNECTION_MESSAGES.paramPair('host')),
      ),
      create(policy('conn-pair', { connection: { params: { hostSecret: { name: 'db', key: 'host' } } } })),
    ],
  },
  {
    name: 'PostgresPolicy: setRole must match ^[A-Za-z_][A-Za-z0-9_$-]*$ (no principal names with @ or .)',
    kind: 'PostgresPolicy',
    steps: [
      create(
        policy('conn-setrole', { connection: { params: { setRole: 'alice@example.com' } } }),
        rejected(
          'spec.connection.params.setRole',
          `Invalid value: "alice@example.com": spec.connection.params.setRole in body should match '^[A-Za-z_][A-Za-z0-9_$-]*$'`,
        ),
      ),
      create(policy('conn-setrole', { connection: { params: { setRole: 'db_admin' } } })),
    ],
  },
  {
    name: 'PostgresPolicy: port is 0..65535 and auth.type is cloud_workload_identity',
    kind: 'PostgresPolicy',
    steps: [
      create(
        policy('conn-port', { connection: { params: { port: 70000 } } }),
        rejected(
          'spec.connection.params.port',
          'Invalid value: 70000: spec.connection.params.port in body should be less than or equal to 65535',
        ),
      ),
      create(
        policy('conn-port', { connection: { params: { auth: { type: 'gcp_workload_identity' } } } }),
        rejected(
          'spec.connection.params.auth.type',
          'Unsupported value: "gcp_workload_identity": supported values: "cloud_workload_identity"',
        ),
      ),
      create(
        policy('conn-port', {
          connection: { params: { port: 5432, auth: { type: 'cloud_workload_identity' } } },
        }),
      ),
    ],
  },
  {
    name: 'PostgresPolicy: connection is required',
    kind: 'PostgresPolicy',
    steps: [
      create(
        {
          apiVersion: 'rolepolicy.io/v1alpha1',
          kind: 'PostgresPolicy',
          metadata: { name: 'no-conn', namespace: 'conformance' },
          spec: {},
        },
        rejected('spec.connection', 'Required value'),
      ),
    ],
  },
  {
    name: 'PostgresPolicy: mode, approval and reconciliation_mode are enums; approval is nullable',
    kind: 'PostgresPolicy',
    steps: [
      create(
        policy('enums', { mode: 'dry-run' }),
        rejected('spec.mode', 'Unsupported value: "dry-run": supported values: "apply", "observe", "plan"'),
      ),
      create(
        policy('enums', { approval: 'always' }),
        rejected('spec.approval', 'Unsupported value: "always": supported values: "manual", "auto"'),
      ),
      create(
        policy('enums', { reconciliation_mode: 'strict' }),
        rejected(
          'spec.reconciliation_mode',
          'Unsupported value: "strict": supported values: "authoritative", "additive", "adopt"',
        ),
      ),
      create(
        policy('enums', { mode: 'observe', approval: null, reconciliation_mode: 'adopt' }),
        ok({ spec: { approval: null } }),
      ),
    ],
  },
  {
    name: 'PostgresPolicy: interval is a duration such as 5m or 1h',
    kind: 'PostgresPolicy',
    steps: [
      create(
        policy('interval', { interval: '5 minutes' }),
        rejected(
          'spec.interval',
          `Invalid value: "5 minutes": spec.interval in body should match '^([0-9]+[smh])+$'`,
        ),
      ),
      create(policy('interval', { interval: '1h30m' })),
    ],
  },
  {
    name: 'PostgresPolicy: a null value is allowed only where a field is nullable',
    kind: 'PostgresPolicy',
    steps: [
      create(
        policy('nulls', {
          grants: [{ object: { type: 'table', schema: 'app', name: '*' }, privileges: [null], role: 'r' }],
        }),
        rejected(
          'spec.grants[0].privileges[0]',
          'Invalid value: "null": spec.grants[0].privileges[0] in body must be of type string: "null"',
        ),
      ),
      create(
        policy('nulls', {
          default_owner: null,
          grants: [
            { object: { type: 'schema', name: null, schema: 'app' }, privileges: ['USAGE'], role: 'r' },
          ],
        }),
      ),
    ],
  },
  {
    name: 'PostgresPolicy: privileges are 1..16 known keywords; role names are 1..63 characters',
    kind: 'PostgresPolicy',
    steps: [
      create(
        policy('bounds', {
          grants: [{ object: { type: 'table', schema: 'app', name: '*' }, privileges: [], role: 'r' }],
        }),
        rejected(
          'spec.grants[0].privileges',
          'Invalid value: 0: spec.grants[0].privileges in body should have at least 1 items',
        ),
      ),
      create(
        policy('bounds', {
          grants: [
            {
              object: { type: 'table', schema: 'app', name: '*' },
              privileges: Array(17).fill('SELECT'),
              role: 'r',
            },
          ],
        }),
        rejected('spec.grants[0].privileges', 'Too many: 17: must have at most 16 items'),
      ),
      create(
        policy('bounds', { roles: [{ name: 'r'.repeat(64) }] }),
        rejected('spec.roles[0].name', 'Too long: may not be more than 63 bytes'),
      ),
      create(
        policy('bounds', { roles: [{ name: 'app', password: { generate: { length: 8 } } }] }),
        rejected(
          'spec.roles[0].password.generate.length',
          'Invalid value: 8: spec.roles[0].password.generate.length in body should be greater than or equal to 16',
        ),
      ),
      create(
        policy('bounds', {
          roles: [{ name: 'r'.repeat(63), password: { generate: { length: 128 } } }],
          grants: [
            {
              object: { type: 'table', schema: 'app', name: '*' },
              privileges: ['SELECT', 'INSERT'],
              role: 'r',
            },
          ],
        }),
      ),
    ],
  },
  {
    name: 'PostgresPolicy: profile names are 1 to 63 characters',
    kind: 'PostgresPolicy',
    steps: [
      create(
        policy('profile-names', { profiles: { ['p'.repeat(64)]: {} } }),
        invalid('spec.profiles', CONTENT_MESSAGES.profileName),
      ),
      create(policy('profile-names', { profiles: { ro: { login: false } } })),
    ],
  },

  {
    name: 'PostgresPolicy: role config has at most 32 entries of at most 256 characters; members at most 512',
    kind: 'PostgresPolicy',
    steps: [
      create(
        policy('limits-config', {
          roles: [
            { name: 'app', config: Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`p${i}`, 'x'])) },
          ],
        }),
        rejected('spec.roles[0].config', 'Too many: 33: must have at most 32 items'),
      ),
      create(
        policy('limits-config', { roles: [{ name: 'app', config: { search_path: 'x'.repeat(257) } }] }),
        rejected('spec.roles[0].config[search_path]', 'Too long: may not be more than 256 bytes'),
      ),
      create(
        policy('limits-config', {
          memberships: [
            { role: 'app_ro', members: Array.from({ length: 513 }, (_, i) => ({ name: `m${i}` })) },
          ],
        }),
        rejected('spec.memberships[0].members', 'Too many: 513: must have at most 512 items'),
      ),
      create(
        policy('limits-config', {
          roles: [{ name: 'app', config: { search_path: 'app, public', statement_timeout: '5s' } }],
          memberships: [{ role: 'app_ro', members: [{ name: 'app', inherit: false, admin: null }] }],
        }),
      ),
    ],
  },
  {
    name: 'Every kind: metadata.name is a lowercase RFC 1123 subdomain',
    kind: 'PostgresPolicy',
    steps: [
      create(
        policy('Bad_Name'),
        rejected(
          'metadata.name',
          `Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
        ),
      ),
    ],
  },
  {
    name: 'Every kind: metadata.name is a lowercase RFC 1123 subdomain (accepted)',
    kind: 'PostgresPolicy',
    steps: [create(policy('good.name-1'))],
  },

  // --- PostgresPolicyCandidate ----------------------------------------------------------------------------
  {
    name: 'PostgresPolicyCandidate: candidate spec is immutable (metadata and status may change, spec may not)',
    kind: 'PostgresPolicyCandidate',
    steps: [
      create(candidate('cand-immutable', { content: { roles: [{ name: 'app' }] } })),
      patch({ metadata: { labels: { team: 'data' } } }),
      statusPatch({ phase: 'Planned', contentDigest: 'sha256:abc' }),
      patch({ spec: { replaces: 'cand-0' } }, invalid('spec', CANDIDATE_SPEC_IMMUTABLE)),
      patch(
        { spec: { content: { roles: [{ name: 'app', login: true }] } } },
        invalid('spec', CANDIDATE_SPEC_IMMUTABLE),
      ),
    ],
  },

  // --- PostgresPolicyPlan ---------------------------------------------------------------------------------
  {
    name: 'PostgresPolicyPlan: origin is immutable once set',
    kind: 'PostgresPolicyPlan',
    steps: [
      create(plan('plan-origin')),
      patch({
        spec: {
          origin: { kind: 'PostgresPolicyCandidate', name: 'c1', uid: 'uid-c1', contentDigest: 'sha256:1' },
        },
      }),
      patch({ spec: { origin: { name: 'c2' } } }, invalid('spec', PLAN_ORIGIN_IMMUTABLE)),
      patch({ spec: { origin: null } }, invalid('spec', PLAN_ORIGIN_IMMUTABLE)),
      patch({ spec: { policyGeneration: 2 } }),
    ],
  },
  {
    name: 'PostgresPolicyPlan: Approved=True and Denied=True are mutually exclusive',
    kind: 'PostgresPolicyPlan',
    steps: [
      create(plan('plan-exclusive')),
      statusPatch(
        {
          decidedBy: REVIEWER,
          conditions: [planCondition('Approved', 'True'), planCondition('Denied', 'True')],
        },
        invalid('status', DECISION_MESSAGES.mutuallyExclusive),
      ),
      statusPatch({
        decidedBy: REVIEWER,
        conditions: [planCondition('Approved', 'False'), planCondition('Denied', 'True')],
      }),
    ],
  },
  {
    name: 'PostgresPolicyPlan: plan decisions are terminal (decision types frozen; messages may be refreshed)',
    kind: 'PostgresPolicyPlan',
    steps: [
      create(plan('plan-terminal')),
      statusPatch({ conditions: [planCondition('Approved', 'False', 'awaiting review')] }),
      statusPatch(approvedPlan),
      statusPatch(
        { conditions: [planCondition('Denied', 'True')] },
        invalid('status', DECISION_MESSAGES.planTerminal),
      ),
      statusPatch({ conditions: [] }, invalid('status', DECISION_MESSAGES.planTerminal)),
      statusPatch({
        phase: 'Approved',
        conditions: [
          planCondition('Approved', 'True', 'approved after review'),
          planCondition('Computed', 'True'),
        ],
      }),
    ],
  },
  {
    name: 'PostgresPolicyPlan: decision identity is write-once',
    kind: 'PostgresPolicyPlan',
    steps: [
      create(plan('plan-identity')),
      statusPatch(approvedPlan),
      statusPatch(
        { decidedBy: { username: 'mallory@example.com' } },
        invalid('status', DECISION_MESSAGES.identityWriteOnce),
      ),
      statusPatch({ decidedBy: REVIEWER, phase: 'Applying' }),
    ],
  },
  {
    name: 'PostgresPolicyPlan: a terminal plan decision and decidedBy identity must be recorded together',
    kind: 'PostgresPolicyPlan',
    steps: [
      create(plan('plan-together')),
      statusPatch(
        { conditions: [planCondition('Approved', 'True')] },
        invalid('status', DECISION_MESSAGES.planTogether),
      ),
      statusPatch({ decidedBy: REVIEWER }, invalid('status', DECISION_MESSAGES.planTogether)),
      statusPatch({ conditions: [planCondition('Approved', 'False')] }),
      statusPatch(approvedPlan),
    ],
  },
  ...writeOnceCases,

  // --- EphemeralAccessPolicy ------------------------------------------------------------------------------
  {
    name: 'EphemeralAccessPolicy: durations match ^([0-9]+[smh])+$; memberships are 1..32',
    kind: 'EphemeralAccessPolicy',
    steps: [
      create(
        accessPolicy('eap-bounds', { maximumDuration: '1d' }),
        rejected(
          'spec.maximumDuration',
          `Invalid value: "1d": spec.maximumDuration in body should match '^([0-9]+[smh])+$'`,
        ),
      ),
      create(
        accessPolicy('eap-bounds', { memberships: [] }),
        rejected(
          'spec.memberships',
          'Invalid value: 0: spec.memberships in body should have at least 1 items',
        ),
      ),
      create(
        accessPolicy('eap-bounds', { approval: { mode: 'Sometimes' } }),
        rejected(
          'spec.approval.mode',
          'Unsupported value: "Sometimes": supported values: "Automatic", "Required"',
        ),
      ),
      create(
        accessPolicy('eap-bounds', {
          maximumDuration: '8h',
          defaultDuration: '1h30m',
          pendingRequestTTL: '30m',
        }),
      ),
    ],
  },

  {
    name: 'EphemeralAccessPolicy: status resolvedRoles at most 32; access conditions bound type, status and message',
    kind: 'EphemeralAccessPolicy',
    steps: [
      create(accessPolicy('eap-status')),
      statusPatch(
        { resolvedRoles: Array.from({ length: 33 }, (_, i) => `r${i}`) },
        rejected('status.resolvedRoles', 'Too many: 33: must have at most 32 items'),
      ),
      statusPatch(
        { conditions: [{ type: 'Ready', status: 'x'.repeat(17) }] },
        rejected('status.conditions[0].status', 'Too long: may not be more than 16 bytes'),
      ),
      statusPatch({
        observedGeneration: 1,
        resolvedRoles: ['app_reader'],
        conditions: [{ type: 'Ready', status: 'True' }],
      }),
    ],
  },

  // --- EphemeralAccessRequest -----------------------------------------------------------------------------
  {
    name: 'EphemeralAccessRequest: request spec is immutable',
    kind: 'EphemeralAccessRequest',
    steps: [
      create(request('ear-immutable', { requestedDuration: '1h', justification: 'incident 42' })),
      patch({ metadata: { annotations: { note: 'x' } } }),
      patch({ spec: { requestedDuration: '4h' } }, invalid('spec', REQUEST_MESSAGES.specImmutable)),
      patch({ spec: { subject: { role: 'bob' } } }, invalid('spec', REQUEST_MESSAGES.specImmutable)),
    ],
  },
  {
    name: 'EphemeralAccessRequest: requestedDuration is a Duration and requestedBy is required',
    kind: 'EphemeralAccessRequest',
    steps: [
      create(
        request('ear-fields', { requestedDuration: '2 hours' }),
        rejected(
          'spec.requestedDuration',
          `Invalid value: "2 hours": spec.requestedDuration in body should match '^([0-9]+[smh])+$'`,
        ),
      ),
      create(
        {
          apiVersion: 'rolepolicy.io/v1alpha1',
          kind: 'EphemeralAccessRequest',
          metadata: { name: 'ear-fields', namespace: 'conformance' },
          spec: { accessPolicyRef: { name: 'readers' }, subject: { role: 'alice' } },
        },
        rejected('spec.requestedBy', 'Required value'),
      ),
      create(request('ear-fields', { requestedDuration: '2h' })),
    ],
  },
  {
    name: 'EphemeralAccessRequest: justification at most 2048, lastError at most 4096, decidedBy groups at most 64, digests at most 71',
    kind: 'EphemeralAccessRequest',
    steps: [
      create(
        request('ear-limits', { justification: 'j'.repeat(2049) }),
        rejected('spec.justification', 'Too long: may not be more than 2048 bytes'),
      ),
      create(request('ear-limits', { justification: 'incident 42' })),
      statusPatch(
        { lastError: 'e'.repeat(4097) },
        rejected('status.lastError', 'Too long: may not be more than 4096 bytes'),
      ),
      statusPatch(
        {
          decidedBy: { username: 'bob', groups: Array.from({ length: 65 }, (_, i) => `g${i}`) },
          conditions: [accessCondition('Denied', 'True')],
        },
        rejected('status.decidedBy.groups', 'Too many: 65: must have at most 64 items'),
      ),
      statusPatch(
        { resolvedAccess: { ...RESOLVED_ACCESS, bundleHash: `sha256:${'b'.repeat(65)}` } },
        rejected('status.resolvedAccess.bundleHash', 'Too long: may not be more than 71 bytes'),
      ),
      statusPatch({ lastError: 'connection refused', resolvedAccess: RESOLVED_ACCESS }),
    ],
  },
  {
    name: 'EphemeralAccessRequest: resolvedAccess is write-once',
    kind: 'EphemeralAccessRequest',
    steps: [
      create(request('ear-resolved')),
      statusPatch({ phase: 'PendingApproval', resolvedAccess: RESOLVED_ACCESS }),
      statusPatch({ resolvedAccess: RESOLVED_ACCESS, approvalExpiresAt: '2026-11-20T10:15:00Z' }),
      statusPatch(
        { resolvedAccess: { bundleHash: `sha256:${'0'.repeat(64)}` } },
        invalid('status', REQUEST_MESSAGES.resolvedAccessWriteOnce),
      ),
      statusPatch({ resolvedAccess: null }, invalid('status', REQUEST_MESSAGES.resolvedAccessWriteOnce)),
    ],
  },
  {
    name: 'EphemeralAccessRequest: activatedAt is write-once (the start of the access clock, ADR 0020)',
    kind: 'EphemeralAccessRequest',
    steps: [
      create(request('ear-activated')),
      statusPatch({ phase: 'Applying', activatedAt: '2026-11-20T10:00:00Z' }),
      statusPatch({
        phase: 'Active',
        activatedAt: '2026-11-20T10:00:00Z',
        expiresAt: '2026-11-20T10:30:00Z',
      }),
      statusPatch(
        { activatedAt: '2026-11-20T11:00:00Z' },
        invalid('status', REQUEST_MESSAGES.activatedAtWriteOnce),
      ),
      statusPatch({ activatedAt: null }, invalid('status', REQUEST_MESSAGES.activatedAtWriteOnce)),
    ],
  },
  {
    name: 'EphemeralAccessRequest: Approved=True and Denied=True are mutually exclusive',
    kind: 'EphemeralAccessRequest',
    steps: [
      create(request('ear-exclusive')),
      statusPatch(
        {
          decidedBy: REVIEWER,
          conditions: [accessCondition('Approved', 'True'), accessCondition('Denied', 'True')],
        },
        invalid('status', DECISION_MESSAGES.mutuallyExclusive),
      ),
      statusPatch({ decidedBy: REVIEWER, conditions: [accessCondition('Denied', 'True')] }),
    ],
  },
  {
    name: 'EphemeralAccessRequest: approval decisions are terminal (the decision condition is frozen entirely)',
    kind: 'EphemeralAccessRequest',
    steps: [
      create(request('ear-terminal')),
      statusPatch(approvedRequest),
      statusPatch(
        { conditions: [accessCondition('Approved', 'True', '2026-11-20T11:00:00Z')] },
        invalid('status', DECISION_MESSAGES.requestTerminal),
      ),
      statusPatch(
        { conditions: [accessCondition('Denied', 'True')] },
        invalid('status', DECISION_MESSAGES.requestTerminal),
      ),
      statusPatch({
        phase: 'Applying',
        conditions: [accessCondition('Approved', 'True'), accessCondition('Ready', 'True')],
      }),
    ],
  },
  {
    name: 'EphemeralAccessRequest: decision identity is write-once',
    kind: 'EphemeralAccessRequest',
    steps: [
      create(request('ear-identity')),
      statusPatch(approvedRequest),
      statusPatch(
        { decidedBy: { username: 'mallory@example.com' } },
        invalid('status', DECISION_MESSAGES.identityWriteOnce),
      ),
      statusPatch({ decidedBy: REVIEWER }),
    ],
  },
  {
    name: 'EphemeralAccessRequest: a terminal approval decision and decidedBy identity must be recorded together',
    kind: 'EphemeralAccessRequest',
    steps: [
      create(request('ear-together')),
      statusPatch(
        { conditions: [accessCondition('Approved', 'True')] },
        invalid('status', DECISION_MESSAGES.requestTogether),
      ),
      statusPatch({ decidedBy: REVIEWER }, invalid('status', DECISION_MESSAGES.requestTogether)),
      statusPatch({ conditions: [accessCondition('Resolved', 'True')] }),
      statusPatch(approvedRequest),
    ],
  },
  {
    name: 'EphemeralAccessRequest: request conditions must use a declared lifecycle or decision type (at most 8)',
    kind: 'EphemeralAccessRequest',
    steps: [
      create(request('ear-types')),
      statusPatch(
        { conditions: [accessCondition('Expired', 'True')] },
        invalid('status.conditions', REQUEST_MESSAGES.conditionTypes, 'array'),
      ),
      statusPatch(
        { conditions: Array.from({ length: 9 }, () => accessCondition('Ready', 'False')) },
        rejected('status.conditions', 'Too many: 9: must have at most 8 items'),
      ),
      statusPatch({
        conditions: [
          accessCondition('Resolved', 'True'),
          accessCondition('Ready', 'True'),
          accessCondition('Applied', 'True'),
        ],
      }),
    ],
  },
];
