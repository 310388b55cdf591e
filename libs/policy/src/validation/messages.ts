// Every validation message in one place, so tests, docs/policy-validation.md and callers share the wording.
// Messages the spec fixes are copied character for character; the rest name the rule they enforce.

/** Validation messages. Functions take the offending values; constants are fixed text. */
export const MESSAGES = {
  // Spec-fixed wording.
  scopeOrSchema: 'exactly one of schema and scope must be set',
  databaseNameRequired: 'database grant targets must set name',

  // Shapes and bounds.
  mustBeObject: 'must be an object',
  mustBeArray: 'must be an array',
  mustBeString: 'must be a string',
  mustBeBoolean: 'must be a boolean',
  mustBeInteger: 'must be an integer',
  required: 'is required',
  unknownField: (allowed: readonly string[]) => `unknown field; allowed fields are ${allowed.join(', ')}`,
  tooManyItems: (max: number) => `must have at most ${max} items`,
  tooFewItems: (min: number) => `must have at least ${min} item${min === 1 ? '' : 's'}`,
  tooManyEntries: (max: number) => `must have at most ${max} entries`,
  tooShort: (min: number) => `must be at least ${min} character${min === 1 ? '' : 's'}`,
  tooLong: (max: number) => `must be at most ${max} characters`,
  tooManyBytes: (max: number) =>
    `must be at most ${max} bytes in UTF-8 (PostgreSQL would silently truncate a longer identifier)`,
  badCharacters: 'must not contain NUL characters or unpaired surrogates',
  notInEnum: (allowed: readonly string[]) => `must be one of ${allowed.join(', ')}`,
  outOfRange: (min: number, max: number) => `must be between ${min} and ${max}`,
  int32: 'must be a 32-bit integer',
  connectionLimit: 'connection_limit must be -1 (unlimited) or at least 0',

  // Names and reserved roles.
  publicReserved: (what: string) => `PUBLIC is the pseudo-role and cannot be used as ${what}`,
  reservedRoleName: (name: string) =>
    `role name '${name}' is reserved by PostgreSQL: even quoted, ${name === 'public' ? 'it means the PUBLIC pseudo-role (write PUBLIC for that)' : 'it is refused as a role'}`,
  pgPrefixMustBeExternal: 'roles named pg_* are predefined: declare them with external: true',
  duplicateRole: (name: string) => `duplicate role name '${name}' (roles are keyed by name)`,
  duplicateGeneratedRole: (name: string, other: string) =>
    `role name '${name}' is produced more than once after expansion (also by ${other})`,
  duplicateSchemaBinding: (name: string) => `duplicate schema binding '${name}' (schemas are keyed by name)`,
  duplicateProfileInBinding: (name: string) => `profile '${name}' is listed more than once`,
  unknownProfile: (name: string) => `unknown profile '${name}'`,
  undeclaredReference: (name: string) =>
    `role '${name}' is referenced but not declared; it is treated as external (never created, altered, dropped or password-managed) and must already exist`,

  // Grants.
  privilegeForType: (privilege: string, type: string) => `privilege ${privilege} is not valid for ${type}`,
  schemaRequired: (type: string) => `object.schema is required for ${type} grants`,
  schemaForbiddenOnDatabase: 'database grant targets must not set schema',
  nameRequired: (type: string) => `object.name is required for ${type} grants (use * for all objects)`,
  schemaTargetRequired: 'schema grant targets must set name or schema (the schema granted on)',
  schemaTargetDisagree: 'schema grant targets must not set name and schema to different schemas',
  wildcardNotAllowed: (type: string) => `${type} grant targets cannot use *`,
  objectNameBytes:
    'object names other than function signatures must be at most 63 bytes in UTF-8 (PostgreSQL would truncate them)',
  profileSchemaGrantName: 'profile schema grants target the bound schema: omit object.name',
  profileAbsent: 'ensure: absent is not allowed in profiles',
  ownerSchemaGrant: (schema: string, owner: string) =>
    `grant on schema '${schema}' to its owner '${owner}' cannot be absent: the owner's CREATE and USAGE are managed as schema owner privileges`,
  ownerSchemaGrantImplied: (path: string, schema: string, owner: string) =>
    `${path}: grant on schema '${schema}' to its owner '${owner}' is implied by ownership and skipped (the owner's CREATE and USAGE are managed as schema owner privileges)`,
  ensureConflict: (what: string) => `conflicting ensure: ${what} is asserted both present and absent`,
  wildcardConflict: (privilege: string, present: string, absent: string) =>
    `conflicting ensure: ${privilege} is present on ${present} and absent on ${absent}; grants run before revokes, so the pair never converges`,

  // Default privileges.
  scopeSchemaRequired: 'scope.schema is required when scope.type is schema',
  scopeSchemaForbidden: 'scope.schema must not be set when scope.type is global',
  defaultGrantRoleRequired: 'top-level default privilege grants must set role (the grantee)',
  defaultOwnerMissing: 'owner is required when default_owner is not set',
  bindingOwnerMissing: (profile: string) =>
    `profile '${profile}' declares default_privileges, so this schema needs owner or the policy needs default_owner`,
  onTypeNever: (type: string) =>
    `default privileges cannot target ${type} (PostgreSQL stores view, materialized_view and database defaults in ways that never converge)`,
  onTypeSchemaGlobalOnly: 'default privileges on schema are only allowed in global scope',
  defaultGranteeIsOwner: (owner: string) =>
    `default privileges granted to their own owner '${owner}' are not allowed (owners hold them implicitly)`,

  // Memberships.
  exclusiveNotAllowed: (role: string) =>
    `exclusive is only allowed for predefined pg_* roles and external roles ('${role}' is neither)`,
  selfMembership: 'a role cannot be a member of itself',
  duplicateMember: (role: string, member: string) =>
    `member '${member}' is declared more than once for role '${role}'`,

  // Roles.
  passwordExclusive: 'password.generate and password.secretRef are mutually exclusive',
  passwordSourceRequired: 'password must set generate or secretRef',
  passwordSecretKeyOnlyWithRef: 'password.secretKey is used only with secretRef',
  passwordRequiresLogin: 'a password requires login: true',
  externalPassword: 'external roles are never password-managed: remove password',
  validUntil:
    'password_valid_until must be an ISO 8601 timestamp with Z or ±HH:MM, optional fraction, and a year from 1970 (e.g. 2025-12-31T00:00:00Z)',
  configName:
    'config names must be dot-joined identifiers ([A-Za-z_][A-Za-z0-9_]* segments), at most 63 characters',
  configValueType: 'config values must be strings; quote numbers and booleans in YAML (e.g. "30s", "on")',
  configDuplicateKey: (key: string) => `config name '${key}' appears more than once after lowercasing`,
  configListSyntax: (key: string) =>
    `${key} must be a comma-separated list of names (double-quote names with commas)`,
  configValueTooLongAfterSubstitution: (schema: string) =>
    `config value is longer than 256 characters after substituting placeholders for schema '${schema}'`,
  configRoleMembership: (target: string) =>
    `config role=${target} needs a declared membership of this role in '${target}', or login fails with "permission denied to set role"`,

  generatedNameTooLong: (name: string, bytes: number) =>
    `generated role name '${name}' is ${bytes} bytes in UTF-8; role names must be at most 63 bytes (shorten role_pattern, the schema or the profile name)`,
  generatedPgPrefix: (name: string) =>
    `generated role name '${name}' starts with pg_, which is reserved for predefined roles`,
  undeclaredDefaultOwner: (name: string) =>
    `default_owner '${name}' is not declared in this policy; it must already exist in the database`,

  retiredReferenced: (role: string, what: string) =>
    `role '${role}' is being retired and cannot be used as ${what}`,
  membershipCycle: (cycle: readonly string[]) =>
    `membership cycle ${cycle.join(' -> ')} (each is a member of the next): PostgreSQL refuses circular role membership`,
  generatedSecretName: (role: string, secret: string) =>
    `role '${role}': the generated password Secret name '${secret}' is not a valid Kubernetes name (lowercase letters, digits, '-' and '.', at most 253); set password.generate.secretName`,

  // Patterns.
  rolePatternProfile: 'role_pattern must contain {profile}',

  // Retirements.
  duplicateRetirement: (role: string) =>
    `role '${role}' is retired more than once (retirements are keyed by role)`,
  retiredAndDesired: (role: string) => `role '${role}' is both retired and declared`,
  selfReassign: 'reassign_owned_to must name a different role than the retired one',
  retirePredefined: 'predefined pg_* roles cannot be retired',
} as const;
