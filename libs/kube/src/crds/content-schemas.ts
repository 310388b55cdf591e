// Policy content building blocks (grants, default privileges, memberships, roles, profiles, schemas, retirements).
// Built twice: with API-server defaults for PostgresPolicy.spec, without any for PostgresPolicyCandidate.spec.content.
import { Type } from '@sinclair/typebox';
import {
  Bool,
  celRules,
  dflt,
  Int32,
  List,
  MapOf,
  Nullable,
  Opt,
  Str,
  StringEnum,
} from './schema-builders.js';
import { Ensure, ObjectType, Privileges, ReconciliationMode, RoleName } from './value-types.js';

/** Messages of the content admission rules, copied from the spec. */
export const CONTENT_MESSAGES = {
  databaseGrantName: 'database grant targets must set name',
  schemaXorScope: 'exactly one of schema and scope must be set',
  scopeSchema: 'schema is required when type is schema and forbidden when type is global',
  passwordSource: 'generate and secretRef are mutually exclusive',
  profileGrantAbsent: 'profile grants must not use ensure: absent',
  profileName: 'profile names must be 1 to 63 characters',
  rolePatternProfile: 'role_pattern must contain {profile}',
} as const;

const roleConfig = () => MapOf(Str({ max: 256 }), { maxProperties: 32 });
const nullableBool = () => Opt(Nullable(Type.Boolean()));

/** A declared role: attributes, settings, and where its password comes from. */
function roleSchema(withDefaults: boolean) {
  const password = Type.Object(
    {
      generate: Opt(
        Nullable(
          Type.Object({
            length: Opt(Type.Integer({ minimum: 16, maximum: 128, ...dflt(withDefaults, 32) })),
            secretKey: Opt(Str({ min: 1, max: 253, ...dflt(withDefaults, 'password') })),
            secretName: Opt(Str({ min: 1, max: 253, ...dflt(withDefaults, '{policy}-gen-{role}') })),
          }),
        ),
      ),
      secretRef: Opt(Nullable(Type.Object({ name: Str({ min: 1, max: 253 }) }))),
      secretKey: Opt(Nullable(Str({ min: 1, max: 253 }))),
    },
    celRules([
      { rule: '!(has(self.generate) && has(self.secretRef))', message: CONTENT_MESSAGES.passwordSource },
    ]),
  );
  const role = Type.Object({
    name: RoleName,
    login: nullableBool(),
    superuser: nullableBool(),
    createdb: nullableBool(),
    createrole: nullableBool(),
    inherit: nullableBool(),
    replication: nullableBool(),
    bypassrls: nullableBool(),
    connection_limit: Opt(Nullable(Int32())),
    comment: Opt(Nullable(Str({ max: 256 }))),
    config: Opt(roleConfig()),
    external: Opt(Bool(dflt(withDefaults, false))),
    password: Opt(Nullable(password)),
    password_valid_until: Opt(Nullable(Str({ max: 64 }))),
    preserve_undeclared_grants: Opt(Bool(dflt(withDefaults, false))),
  });
  return role;
}

/** A profile: the attributes and grants every role it stamps out of a schema gets. */
function profileSchema() {
  const profile = Type.Object({
    login: nullableBool(),
    inherit: nullableBool(),
    config: Opt(roleConfig()),
    grants: Opt(
      List(
        Type.Object(
          {
            ensure: Opt(Ensure),
            object: Type.Object({ type: ObjectType, name: Opt(Nullable(Str({ min: 1, max: 256 }))) }),
            privileges: Privileges,
          },
          celRules([
            {
              rule: "!has(self.ensure) || self.ensure != 'absent'",
              message: CONTENT_MESSAGES.profileGrantAbsent,
            },
          ]),
        ),
        { max: 64 },
      ),
    ),
    default_privileges: Opt(
      List(
        Type.Object({
          ensure: Opt(Ensure),
          on_type: ObjectType,
          privileges: Privileges,
          role: Opt(Nullable(Str({ min: 1, max: 63 }))),
        }),
        { max: 32 },
      ),
    ),
  });
  return profile;
}

/** ALTER DEFAULT PRIVILEGES entries: an owner, exactly one of schema and scope, and the grants. */
function defaultPrivilegeSchema() {
  const defaultPrivilegeGrant = Type.Object({
    ensure: Opt(Ensure),
    on_type: ObjectType,
    privileges: Privileges,
    role: Opt(Nullable(Str({ min: 1, max: 63 }))),
  });
  const defaultPrivilegeScope = Type.Object(
    {
      type: StringEnum(['global', 'schema'] as const),
      schema: Opt(Nullable(Str({ min: 1, max: 63 }))),
    },
    celRules([
      {
        rule: "self.type == 'schema' ? has(self.schema) : !has(self.schema)",
        message: CONTENT_MESSAGES.scopeSchema,
      },
    ]),
  );
  const defaultPrivilege = Type.Object(
    {
      owner: Opt(Nullable(Str({ min: 1, max: 63 }))),
      schema: Opt(Nullable(Str({ min: 1, max: 63 }))),
      scope: Opt(Nullable(defaultPrivilegeScope)),
      grant: List(defaultPrivilegeGrant, { max: 64 }),
    },
    celRules([{ rule: 'has(self.schema) != has(self.scope)', message: CONTENT_MESSAGES.schemaXorScope }]),
  );
  return defaultPrivilege;
}

/** Builds every content block; `withDefaults` false leaves candidate content exactly as written. */
export function contentBlocks(withDefaults: boolean) {
  const grantObject = Type.Object(
    {
      type: ObjectType,
      name: Opt(Nullable(Str({ min: 1, max: 256 }))),
      schema: Opt(Nullable(Str({ min: 1, max: 63 }))),
    },
    celRules([
      { rule: "self.type != 'database' || has(self.name)", message: CONTENT_MESSAGES.databaseGrantName },
    ]),
  );
  const grant = Type.Object({
    ensure: Opt(Ensure),
    object: grantObject,
    privileges: Privileges,
    role: Str({ min: 1, max: 63 }),
  });

  const defaultPrivilege = defaultPrivilegeSchema();

  const membership = Type.Object({
    role: RoleName,
    members: List(
      Type.Object({
        name: RoleName,
        inherit: Opt(Nullable(Type.Boolean())),
        admin: Opt(Nullable(Type.Boolean())),
      }),
      { max: 512 },
    ),
    exclusive: Opt(Bool(dflt(withDefaults, false))),
  });

  const role = roleSchema(withDefaults);
  const profile = profileSchema();

  const schemaBinding = Type.Object({
    name: Str({ min: 1, max: 63 }),
    owner: Opt(Nullable(Str({ min: 1, max: 63 }))),
    profiles: Opt(List(Str({ min: 1, max: 63 }), { max: 64 })),
    role_pattern: Opt(Nullable(Str({ min: 1, max: 128 }))),
  });

  const retirement = Type.Object({
    role: RoleName,
    reassign_owned_to: Opt(Nullable(Str({ min: 1, max: 63 }))),
    drop_owned: Opt(Bool(dflt(withDefaults, false))),
    terminate_sessions: Opt(Bool(dflt(withDefaults, false))),
  });

  const emptyList = dflt(withDefaults, [] as never[]);
  /** Content fields shared by PostgresPolicy.spec and PostgresPolicyCandidate.spec.content. */
  const fields = {
    default_owner: Opt(Nullable(Str({ min: 1, max: 63 }))),
    default_privileges: Opt(List(defaultPrivilege, { max: 512, ...emptyList })),
    grants: Opt(List(grant, { max: 4096, ...emptyList })),
    memberships: Opt(List(membership, { max: 2048, ...emptyList })),
    profiles: Opt(
      Type.Unsafe<Record<string, import('@sinclair/typebox').Static<typeof profile>>>({
        ...MapOf(profile, { maxProperties: 128, ...dflt(withDefaults, {} as Record<string, never>) }),
        ...celRules([
          { rule: 'self.all(k, k.size() >= 1 && k.size() <= 63)', message: CONTENT_MESSAGES.profileName },
        ]),
      }),
    ),
    retirements: Opt(List(retirement, { max: 512, listType: 'map', mapKeys: ['role'], ...emptyList })),
    role_pattern: Opt(
      Nullable(
        Str({
          min: 1,
          max: 128,
          rules: [{ rule: "self.contains('{profile}')", message: CONTENT_MESSAGES.rolePatternProfile }],
        }),
      ),
    ),
    roles: Opt(List(role, { max: 1024, listType: 'map', mapKeys: ['name'], ...emptyList })),
    schemas: Opt(List(schemaBinding, { max: 1024, listType: 'map', mapKeys: ['name'], ...emptyList })),
  };
  return {
    fields,
    grant,
    defaultPrivilege,
    membership,
    role,
    profile,
    schemaBinding,
    retirement,
    ReconciliationMode,
  };
}
