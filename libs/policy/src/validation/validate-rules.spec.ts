// One test per content rule of the spec ("Policy content building blocks", "PostgresPolicy") and of the
// expansion pipeline (docs/policy-validation.md), named after the rule, asserting the exact path and message.

import { validateContent } from './validate.js';
import { MESSAGES } from './messages.js';
import { expandPolicy } from '../expansion/index.js';
import { deriveManagedScope } from '../scope/index.js';
import type { PolicyContent } from '../model/index.js';

function errors(content: unknown): readonly { path: string; message: string }[] {
  const result = validateContent(content);
  return result.ok ? [] : result.errors;
}

const app = { name: 'app' };
const tableGrant = { role: 'app', object: { type: 'table', schema: 's', name: 't' }, privileges: ['SELECT'] };

describe('grant entries', () => {
  it('spec message: database grant targets must set name', () => {
    expect(
      errors({
        roles: [app],
        grants: [{ role: 'app', object: { type: 'database' }, privileges: ['CONNECT'] }],
      }),
    ).toEqual([{ path: 'spec.grants[0].object.name', message: 'database grant targets must set name' }]);
  });

  it('database grant targets never set schema and never use *', () => {
    expect(
      errors({
        roles: [app],
        grants: [
          { role: 'app', object: { type: 'database', name: 'db', schema: 's' }, privileges: ['CONNECT'] },
          { role: 'app', object: { type: 'database', name: '*' }, privileges: ['CONNECT'] },
        ],
      }),
    ).toEqual([
      { path: 'spec.grants[0].object.schema', message: MESSAGES.schemaForbiddenOnDatabase },
      { path: 'spec.grants[1].object.name', message: MESSAGES.wildcardNotAllowed('database') },
    ]);
  });

  it('schema targets accept name or schema, require agreement, and never default', () => {
    const schemaGrant = (object: object) => ({
      role: 'app',
      object: { type: 'schema', ...object },
      privileges: ['USAGE'],
    });
    expect(
      errors({ roles: [app], grants: [schemaGrant({ name: 's' }), schemaGrant({ schema: 's' })] }),
    ).toEqual([]);
    expect(errors({ roles: [app], grants: [schemaGrant({ name: 's', schema: 's' })] })).toEqual([]);
    expect(errors({ roles: [app], grants: [schemaGrant({ name: 'a', schema: 'b' })] })).toEqual([
      { path: 'spec.grants[0].object', message: MESSAGES.schemaTargetDisagree },
    ]);
    expect(errors({ roles: [app], grants: [schemaGrant({})] })).toEqual([
      { path: 'spec.grants[0].object', message: MESSAGES.schemaTargetRequired },
    ]);
  });

  it('relation, sequence, function and type grants require schema and name (never defaulting to public)', () => {
    expect(
      errors({ roles: [app], grants: [{ role: 'app', object: { type: 'table' }, privileges: ['SELECT'] }] }),
    ).toEqual([
      { path: 'spec.grants[0].object.schema', message: MESSAGES.schemaRequired('table') },
      { path: 'spec.grants[0].object.name', message: MESSAGES.nameRequired('table') },
    ]);
  });

  it('ensure must be present or absent', () => {
    expect(errors({ roles: [app], grants: [{ ...tableGrant, ensure: 'gone' }] })).toEqual([
      { path: 'spec.grants[0].ensure', message: MESSAGES.notInEnum(['present', 'absent']) },
    ]);
  });

  it('an undeclared grantee is accepted and managed as an implicit external role, with a warning', () => {
    expect(errors({ grants: [tableGrant] })).toEqual([]);
    const expanded = expandPolicy({ grants: [tableGrant] } as PolicyContent, { policyName: 'p' });
    if (!expanded.ok) throw new Error('expected the policy to expand');
    expect(expanded.desired.roles).toEqual([
      expect.objectContaining({ name: 'app', external: true, password: null }),
    ]);
    expect(expanded.desired.warnings).toEqual([MESSAGES.undeclaredReference('app')]);
    expect(deriveManagedScope(expanded.desired).roles).toEqual(['app']);
    expect(errors({ grants: [{ ...tableGrant, role: 'PUBLIC' }] })).toEqual([]);
    expect(errors({ roles: [{ name: 'app', external: true }], grants: [tableGrant] })).toEqual([]);
  });

  it("a grant to a schema's own owner is implied by ownership: skipped with a warning, never planned", () => {
    const content = {
      roles: [{ name: 'owner' }],
      schemas: [{ name: 's', owner: 'owner' }],
      grants: [
        { role: 'owner', object: { type: 'schema', name: 's' }, privileges: ['USAGE', 'CREATE'] },
        { role: 'owner', object: { type: 'table', schema: 's', name: '*' }, privileges: ['SELECT'] },
      ],
    };
    expect(errors(content)).toEqual([]);
    const expanded = expandPolicy(content as PolicyContent, { policyName: 'p' });
    if (!expanded.ok) throw new Error('expected the policy to expand');
    expect(expanded.desired.warnings).toContain(
      MESSAGES.ownerSchemaGrantImplied('spec.grants[0]', 's', 'owner'),
    );
    expect(expanded.desired.grants.map((g) => g.object_type)).toEqual(['table']);
    expect(expanded.desired.schemas).toEqual([
      { name: 's', owner: 'owner', owner_privileges: ['CREATE', 'USAGE'] },
    ]);
  });

  it("asserting a schema's owner lacks its own privileges is rejected", () => {
    expect(
      errors({
        roles: [{ name: 'owner' }],
        schemas: [{ name: 's', owner: 'owner' }],
        grants: [
          { role: 'owner', object: { type: 'schema', name: 's' }, privileges: ['USAGE'], ensure: 'absent' },
        ],
      }),
    ).toEqual([{ path: 'spec.grants[0]', message: MESSAGES.ownerSchemaGrant('s', 'owner') }]);
  });

  it('ensure conflict: the same key and privilege present and absent', () => {
    expect(
      errors({
        roles: [app],
        grants: [tableGrant, { ...tableGrant, ensure: 'absent', privileges: ['SELECT', 'INSERT'] }],
      }),
    ).toEqual([{ path: 'spec.grants[1]', message: MESSAGES.ensureConflict('SELECT on table s.t for app') }]);
  });

  it('ensure conflict: a wildcard and a named selector disagreeing on a privilege', () => {
    const star = { ...tableGrant, object: { type: 'table', schema: 's', name: '*' } };
    expect(errors({ roles: [app], grants: [star, { ...tableGrant, ensure: 'absent' }] })).toEqual([
      {
        path: 'spec.grants[1]',
        message: MESSAGES.wildcardConflict('SELECT', 'table s.* for app', 'table s.t for app'),
      },
    ]);
    expect(errors({ roles: [app], grants: [tableGrant, { ...star, ensure: 'absent' }] })).toEqual([
      {
        path: 'spec.grants[1]',
        message: MESSAGES.wildcardConflict('SELECT', 'table s.t for app', 'table s.* for app'),
      },
    ]);
    expect(
      errors({ roles: [app], grants: [star, { ...tableGrant, ensure: 'absent', privileges: ['DELETE'] }] }),
    ).toEqual([]);
  });
});

describe('default privilege entries', () => {
  const block = (extra: object) => ({
    owner: 'owner',
    grant: [{ on_type: 'table', privileges: ['SELECT'], role: 'app' }],
    ...extra,
  });
  const base = { roles: [app, { name: 'owner' }] };

  it('spec message: exactly one of schema and scope must be set', () => {
    expect(errors({ ...base, default_privileges: [block({})] })).toEqual([
      { path: 'spec.default_privileges[0]', message: 'exactly one of schema and scope must be set' },
    ]);
    expect(
      errors({
        ...base,
        default_privileges: [block({ schema: 's', scope: { type: 'schema', schema: 's' } })],
      }),
    ).toEqual([
      { path: 'spec.default_privileges[0]', message: 'exactly one of schema and scope must be set' },
    ]);
  });

  it('scope.schema is required when scope.type is schema and forbidden when global', () => {
    expect(errors({ ...base, default_privileges: [block({ scope: { type: 'schema' } })] })).toEqual([
      { path: 'spec.default_privileges[0].scope.schema', message: MESSAGES.scopeSchemaRequired },
    ]);
    expect(
      errors({ ...base, default_privileges: [block({ scope: { type: 'global', schema: 's' } })] }),
    ).toEqual([{ path: 'spec.default_privileges[0].scope.schema', message: MESSAGES.scopeSchemaForbidden }]);
  });

  it('on_type matrix: never database, view or materialized_view', () => {
    for (const onType of ['database', 'view', 'materialized_view']) {
      const b = {
        owner: 'owner',
        scope: { type: 'global' },
        grant: [{ on_type: onType, privileges: ['SELECT'], role: 'app' }],
      };
      expect(errors({ ...base, default_privileges: [b] })).toContainEqual({
        path: 'spec.default_privileges[0].grant[0].on_type',
        message: MESSAGES.onTypeNever(onType),
      });
    }
  });

  it('on_type matrix: schema only in global scope', () => {
    const item = { on_type: 'schema', privileges: ['USAGE'], role: 'app' };
    expect(errors({ ...base, default_privileges: [{ owner: 'owner', schema: 's', grant: [item] }] })).toEqual(
      [{ path: 'spec.default_privileges[0].grant[0].on_type', message: MESSAGES.onTypeSchemaGlobalOnly }],
    );
    expect(
      errors({ ...base, default_privileges: [{ owner: 'owner', scope: { type: 'global' }, grant: [item] }] }),
    ).toEqual([]);
  });

  it('top-level default grants must name role', () => {
    const b = { owner: 'owner', schema: 's', grant: [{ on_type: 'table', privileges: ['SELECT'] }] };
    expect(errors({ ...base, default_privileges: [b] })).toEqual([
      { path: 'spec.default_privileges[0].grant[0].role', message: MESSAGES.defaultGrantRoleRequired },
    ]);
  });

  it('default grants whose grantee is the owner are rejected (owner from the entry or default_owner)', () => {
    const item = { on_type: 'table', privileges: ['SELECT'], role: 'owner' };
    expect(errors({ ...base, default_privileges: [{ owner: 'owner', schema: 's', grant: [item] }] })).toEqual(
      [
        {
          path: 'spec.default_privileges[0].grant[0].role',
          message: MESSAGES.defaultGranteeIsOwner('owner'),
        },
      ],
    );
    expect(
      errors({ ...base, default_owner: 'owner', default_privileges: [{ schema: 's', grant: [item] }] }),
    ).toEqual([
      { path: 'spec.default_privileges[0].grant[0].role', message: MESSAGES.defaultGranteeIsOwner('owner') },
    ]);
  });

  it('an owner is required when default_owner is not set (never a silent postgres fallback)', () => {
    const b = { schema: 's', grant: [{ on_type: 'table', privileges: ['SELECT'], role: 'app' }] };
    expect(errors({ ...base, default_privileges: [b] })).toEqual([
      { path: 'spec.default_privileges[0].owner', message: MESSAGES.defaultOwnerMissing },
    ]);
  });

  it('ensure conflict: the same default key and privilege both ways', () => {
    const b = {
      owner: 'owner',
      schema: 's',
      grant: [
        { on_type: 'table', privileges: ['SELECT'], role: 'app' },
        { on_type: 'table', privileges: ['SELECT'], role: 'app', ensure: 'absent' },
      ],
    };
    expect(errors({ ...base, default_privileges: [b] })).toEqual([
      {
        path: 'spec.default_privileges[0].grant[1]',
        message: MESSAGES.ensureConflict('default SELECT on table in schema s owned by owner for app'),
      },
    ]);
  });
});

describe('memberships', () => {
  it('exclusive is only allowed on pg_* or external roles', () => {
    expect(
      errors({ roles: [app], memberships: [{ role: 'app', members: [{ name: 'm' }], exclusive: true }] }),
    ).toEqual([{ path: 'spec.memberships[0].exclusive', message: MESSAGES.exclusiveNotAllowed('app') }]);
    expect(
      errors({ memberships: [{ role: 'pg_read_all_data', members: [{ name: 'm' }], exclusive: true }] }),
    ).toEqual([]);
    expect(
      errors({
        roles: [{ name: 'ext', external: true }],
        memberships: [{ role: 'ext', members: [{ name: 'm' }], exclusive: true }],
      }),
    ).toEqual([]);
  });

  it('an undeclared granted role is managed as an implicit external role; members need not be declared', () => {
    const content = { memberships: [{ role: 'app', members: [{ name: 'alice' }] }] };
    expect(errors(content)).toEqual([]);
    const expanded = expandPolicy(content, { policyName: 'p' });
    if (!expanded.ok) throw new Error('expected the policy to expand');
    expect(expanded.desired.roles.map((r) => [r.name, r.external])).toEqual([['app', true]]);
    expect(expanded.desired.warnings).toEqual([MESSAGES.undeclaredReference('app')]);
  });

  it('declared memberships must not form a cycle', () => {
    expect(
      errors({
        roles: [{ name: 'a' }, { name: 'b' }, { name: 'c' }],
        memberships: [
          { role: 'a', members: [{ name: 'b' }] },
          { role: 'b', members: [{ name: 'c' }] },
          { role: 'c', members: [{ name: 'a' }] },
        ],
      }),
    ).toEqual([
      {
        path: 'spec.memberships[0].members[0].name',
        message: MESSAGES.membershipCycle(['a', 'c', 'b', 'a']),
      },
    ]);
  });

  it('a role cannot be a member of itself; an edge is declared once', () => {
    expect(
      errors({
        roles: [app],
        memberships: [
          { role: 'app', members: [{ name: 'app' }, { name: 'm' }] },
          { role: 'app', members: [{ name: 'm' }] },
        ],
      }),
    ).toEqual([
      { path: 'spec.memberships[0].members[0].name', message: MESSAGES.selfMembership },
      { path: 'spec.memberships[1].members[0].name', message: MESSAGES.duplicateMember('app', 'm') },
    ]);
  });
});

describe('PUBLIC reservation', () => {
  it('PUBLIC is rejected as role name, owner, member, membership role, retirement role and reassign target', () => {
    const found = errors({
      default_owner: 'PUBLIC',
      roles: [{ name: 'PUBLIC' }],
      schemas: [{ name: 's', owner: 'PUBLIC' }],
      default_privileges: [{ owner: 'PUBLIC', schema: 's', grant: [] }],
      memberships: [{ role: 'PUBLIC', members: [{ name: 'PUBLIC' }] }],
      retirements: [{ role: 'PUBLIC' }, { role: 'old', reassign_owned_to: 'PUBLIC' }],
    });
    expect(found).toEqual(
      expect.arrayContaining([
        { path: 'spec.default_owner', message: MESSAGES.publicReserved('an owner') },
        { path: 'spec.roles[0].name', message: MESSAGES.publicReserved('a role name') },
        { path: 'spec.schemas[0].owner', message: MESSAGES.publicReserved('a schema owner') },
        {
          path: 'spec.default_privileges[0].owner',
          message: MESSAGES.publicReserved('a default privilege owner'),
        },
        { path: 'spec.memberships[0].role', message: MESSAGES.publicReserved('a membership role') },
        { path: 'spec.memberships[0].members[0].name', message: MESSAGES.publicReserved('a member') },
        { path: 'spec.retirements[0].role', message: MESSAGES.publicReserved('a retirement role') },
        {
          path: 'spec.retirements[1].reassign_owned_to',
          message: MESSAGES.publicReserved('a reassign target'),
        },
      ]),
    );
  });

  it('"PUBLIC" (with quotes) and other spellings such as Public are ordinary role names', () => {
    expect(errors({ roles: [{ name: '"PUBLIC"' }, { name: 'Public' }, { name: 'NONE' }] })).toEqual([]);
  });

  it('public and none are reserved by PostgreSQL in every role position (quoted "public" still means PUBLIC)', () => {
    const found = errors({
      roles: [{ name: 'public' }, { name: 'app' }],
      grants: [{ role: 'public', object: { type: 'table', schema: 's', name: 't' }, privileges: ['SELECT'] }],
      memberships: [{ role: 'app', members: [{ name: 'none' }] }],
      schemas: [{ name: 'public', owner: 'none' }],
    });
    expect(found).toEqual([
      { path: 'spec.roles[0].name', message: MESSAGES.reservedRoleName('public') },
      { path: 'spec.schemas[0].owner', message: MESSAGES.reservedRoleName('none') },
      { path: 'spec.grants[0].role', message: MESSAGES.reservedRoleName('public') },
      { path: 'spec.memberships[0].members[0].name', message: MESSAGES.reservedRoleName('none') },
    ]);
  });

  it('a role_pattern producing public or none is rejected', () => {
    expect(
      errors({
        profiles: { public: {} },
        schemas: [{ name: 's', profiles: ['public'], role_pattern: '{profile}' }],
      }),
    ).toEqual([{ path: 'spec.schemas[0].profiles[0]', message: MESSAGES.reservedRoleName('public') }]);
  });
});

describe('roles', () => {
  it('pg_-prefixed declared roles must be external', () => {
    expect(errors({ roles: [{ name: 'pg_monitor' }] })).toEqual([
      { path: 'spec.roles[0].name', message: MESSAGES.pgPrefixMustBeExternal },
    ]);
    expect(errors({ roles: [{ name: 'pg_monitor', external: true }] })).toEqual([]);
  });

  it('role names are unique (list-map key)', () => {
    expect(errors({ roles: [app, app] })).toEqual([
      { path: 'spec.roles[1].name', message: MESSAGES.duplicateRole('app') },
    ]);
  });

  it('connection_limit is an int32 of -1 or more', () => {
    expect(errors({ roles: [{ name: 'a', connection_limit: -2 }] })).toEqual([
      { path: 'spec.roles[0].connection_limit', message: MESSAGES.connectionLimit },
    ]);
    expect(errors({ roles: [{ name: 'a', connection_limit: 2 ** 31 }] })).toEqual([
      { path: 'spec.roles[0].connection_limit', message: MESSAGES.int32 },
    ]);
    expect(
      errors({
        roles: [
          { name: 'a', connection_limit: -1 },
          { name: 'b', connection_limit: 0 },
        ],
      }),
    ).toEqual([]);
  });

  it('comment is at most 256 characters', () => {
    expect(errors({ roles: [{ name: 'a', comment: 'c'.repeat(257) }] })).toEqual([
      { path: 'spec.roles[0].comment', message: MESSAGES.tooLong(256) },
    ]);
  });

  it('config names are dot-joined identifiers', () => {
    const found = errors({
      roles: [{ name: 'a', config: { 'my-setting': 'x', '1abc': 'x', 'ext.': 'x', 'myext.opt_1': 'x' } }],
    });
    expect(found).toEqual([
      { path: 'spec.roles[0].config["my-setting"]', message: MESSAGES.configName },
      { path: 'spec.roles[0].config["1abc"]', message: MESSAGES.configName },
      { path: 'spec.roles[0].config["ext."]', message: MESSAGES.configName },
    ]);
  });

  it('config values must be strings (an unquoted YAML number or bool is rejected with a hint)', () => {
    expect(errors({ roles: [{ name: 'a', config: { statement_timeout: 30, jit: true } }] })).toEqual([
      { path: 'spec.roles[0].config.statement_timeout', message: MESSAGES.configValueType },
      { path: 'spec.roles[0].config.jit', message: MESSAGES.configValueType },
    ]);
  });

  it('config names are unique after lowercasing', () => {
    expect(errors({ roles: [{ name: 'a', config: { work_mem: '1MB', WORK_MEM: '2MB' } }] })).toEqual([
      { path: 'spec.roles[0].config.WORK_MEM', message: MESSAGES.configDuplicateKey('work_mem') },
    ]);
  });

  it('list GUC values must parse as PostgreSQL lists', () => {
    expect(errors({ roles: [{ name: 'a', config: { search_path: 'a, "unclosed' } }] })).toEqual([
      { path: 'spec.roles[0].config.search_path', message: MESSAGES.configListSyntax('search_path') },
    ]);
  });

  it('config role=X with X declared requires a declared membership of this role in X', () => {
    const roles = [{ name: 'writer' }, { name: 'app', login: true, config: { role: 'writer' } }];
    expect(errors({ roles })).toEqual([
      { path: 'spec.roles[1].config.role', message: MESSAGES.configRoleMembership('writer') },
    ]);
    expect(errors({ roles, memberships: [{ role: 'writer', members: [{ name: 'app' }] }] })).toEqual([]);
  });
});

describe('passwords', () => {
  const login = { name: 'app', login: true };

  it('password requires login: true', () => {
    expect(errors({ roles: [{ name: 'app', password: { generate: {} } }] })).toEqual([
      { path: 'spec.roles[0].password', message: MESSAGES.passwordRequiresLogin },
    ]);
    expect(errors({ roles: [{ ...login, password: { generate: {} } }] })).toEqual([]);
  });

  it('generate and secretRef are mutually exclusive', () => {
    expect(errors({ roles: [{ ...login, password: { generate: {}, secretRef: { name: 's' } } }] })).toEqual([
      { path: 'spec.roles[0].password', message: MESSAGES.passwordExclusive },
    ]);
  });

  it('a password needs generate or secretRef', () => {
    expect(errors({ roles: [{ ...login, password: {} }] })).toEqual([
      { path: 'spec.roles[0].password', message: MESSAGES.passwordSourceRequired },
    ]);
  });

  it('password.secretKey is used only with secretRef', () => {
    expect(errors({ roles: [{ ...login, password: { generate: {}, secretKey: 'k' } }] })).toEqual([
      { path: 'spec.roles[0].password.secretKey', message: MESSAGES.passwordSecretKeyOnlyWithRef },
    ]);
  });

  it('generate.length is 16..128', () => {
    for (const length of [15, 129]) {
      expect(errors({ roles: [{ ...login, password: { generate: { length } } }] })).toEqual([
        { path: 'spec.roles[0].password.generate.length', message: MESSAGES.outOfRange(16, 128) },
      ]);
    }
    expect(errors({ roles: [{ ...login, password: { generate: { length: 16 } } }] })).toEqual([]);
    expect(errors({ roles: [{ ...login, password: { generate: { length: 128 } } }] })).toEqual([]);
  });

  it('secret names and keys are 1..253 characters', () => {
    expect(
      errors({ roles: [{ ...login, password: { secretRef: { name: 'x'.repeat(254) }, secretKey: '' } }] }),
    ).toEqual([
      { path: 'spec.roles[0].password.secretRef.name', message: MESSAGES.tooLong(253) },
      { path: 'spec.roles[0].password.secretKey', message: MESSAGES.tooShort(1) },
    ]);
  });

  it('external roles are never password-managed', () => {
    expect(errors({ roles: [{ ...login, external: true, password: { generate: {} } }] })).toEqual([
      { path: 'spec.roles[0].password', message: MESSAGES.externalPassword },
    ]);
  });

  it('password_valid_until must be ISO 8601 with Z or ±HH:MM, optional fraction, year >= 1970', () => {
    const at = (value: string) => errors({ roles: [{ name: 'a', password_valid_until: value }] });
    for (const ok of [
      '2025-12-31T00:00:00Z',
      '2025-12-31T05:00:00.123+05:00',
      '1970-01-01T00:00:00Z',
      '2030-02-28T23:59:59-08:00',
    ]) {
      expect(at(ok)).toEqual([]);
    }
    for (const bad of [
      '2025-12-31',
      '2025-12-31T00:00:00',
      '2025-12-31 00:00:00Z',
      '1969-12-31T23:59:59Z',
      '2025-02-30T00:00:00Z',
      '2025-12-31T24:00:00Z',
      'infinity',
      '2025-12-31T00:00:00+0500',
    ]) {
      expect(at(bad)).toEqual([{ path: 'spec.roles[0].password_valid_until', message: MESSAGES.validUntil }]);
    }
    expect(at('x'.repeat(65))).toContainEqual({
      path: 'spec.roles[0].password_valid_until',
      message: MESSAGES.tooLong(64),
    });
  });
});

describe('profiles and schema bindings', () => {
  it('profile ensure: absent is rejected', () => {
    const profiles = {
      p: { grants: [{ ensure: 'absent', object: { type: 'table' }, privileges: ['SELECT'] }] },
    };
    expect(errors({ profiles })).toEqual([
      { path: 'spec.profiles.p.grants[0].ensure', message: MESSAGES.profileAbsent },
    ]);
  });

  it('profile schema grants target the bound schema', () => {
    const profiles = { p: { grants: [{ object: { type: 'schema', name: 'x' }, privileges: ['USAGE'] }] } };
    expect(errors({ profiles })).toEqual([
      { path: 'spec.profiles.p.grants[0].object.name', message: MESSAGES.profileSchemaGrantName },
    ]);
  });

  it('profile default privileges are schema-scoped: schema on_type is rejected', () => {
    const profiles = { p: { default_privileges: [{ on_type: 'schema', privileges: ['USAGE'] }] } };
    expect(errors({ profiles })).toEqual([
      { path: 'spec.profiles.p.default_privileges[0].on_type', message: MESSAGES.onTypeSchemaGlobalOnly },
    ]);
  });

  it('role_pattern is 1..128 and must contain {profile} (policy and binding level)', () => {
    expect(errors({ role_pattern: '{schema}_ro' })).toEqual([
      { path: 'spec.role_pattern', message: MESSAGES.rolePatternProfile },
    ]);
    expect(errors({ schemas: [{ name: 's', role_pattern: 'fixed' }] })).toEqual([
      { path: 'spec.schemas[0].role_pattern', message: MESSAGES.rolePatternProfile },
    ]);
    expect(errors({ role_pattern: `{profile}${'x'.repeat(120)}` })).toEqual([
      { path: 'spec.role_pattern', message: MESSAGES.tooLong(128) },
    ]);
    expect(errors({ role_pattern: '' })).toContainEqual({
      path: 'spec.role_pattern',
      message: MESSAGES.tooShort(1),
    });
  });

  it('schema bindings are unique and reference declared profiles once', () => {
    expect(
      errors({ profiles: { p: {} }, schemas: [{ name: 's', profiles: ['p', 'p', 'q'] }, { name: 's' }] }),
    ).toEqual([
      { path: 'spec.schemas[0].profiles', message: MESSAGES.duplicateProfileInBinding('p') },
      { path: 'spec.schemas[0].profiles[2]', message: MESSAGES.unknownProfile('q') },
      { path: 'spec.schemas[1].name', message: MESSAGES.duplicateSchemaBinding('s') },
    ]);
  });

  it('profiles with default_privileges need a binding owner or default_owner', () => {
    const profiles = { p: { default_privileges: [{ on_type: 'table', privileges: ['SELECT'] }] } };
    expect(errors({ profiles, schemas: [{ name: 's', profiles: ['p'] }] })).toEqual([
      { path: 'spec.schemas[0].owner', message: MESSAGES.bindingOwnerMissing('p') },
    ]);
  });
});

describe('duplicate role names after expansion', () => {
  it('a generated role colliding with a one-off role is rejected', () => {
    expect(
      errors({ roles: [{ name: 's-p' }], profiles: { p: {} }, schemas: [{ name: 's', profiles: ['p'] }] }),
    ).toEqual([
      {
        path: 'spec.roles[0].name',
        message: MESSAGES.duplicateGeneratedRole('s-p', 'spec.schemas[0].profiles[0]'),
      },
    ]);
  });

  it('two bindings generating the same name are rejected', () => {
    const content = {
      role_pattern: 'shared_{profile}',
      profiles: { p: {} },
      schemas: [
        { name: 'a', profiles: ['p'] },
        { name: 'b', profiles: ['p'] },
      ],
    };
    expect(errors(content)).toEqual([
      {
        path: 'spec.schemas[1].profiles[0]',
        message: MESSAGES.duplicateGeneratedRole('shared_p', 'spec.schemas[0].profiles[0]'),
      },
    ]);
  });
});

describe('retirements', () => {
  it('retirements are unique by role', () => {
    expect(errors({ retirements: [{ role: 'old' }, { role: 'old' }] })).toEqual([
      { path: 'spec.retirements[1].role', message: MESSAGES.duplicateRetirement('old') },
    ]);
  });

  it('a retired role is not also declared (one-off or generated)', () => {
    expect(errors({ roles: [app], retirements: [{ role: 'app' }] })).toEqual([
      { path: 'spec.retirements[0].role', message: MESSAGES.retiredAndDesired('app') },
    ]);
    expect(
      errors({
        profiles: { p: {} },
        schemas: [{ name: 's', profiles: ['p'] }],
        retirements: [{ role: 's-p' }],
      }),
    ).toEqual([{ path: 'spec.retirements[0].role', message: MESSAGES.retiredAndDesired('s-p') }]);
  });

  it('no self-reassign', () => {
    expect(errors({ retirements: [{ role: 'old', reassign_owned_to: 'old' }] })).toEqual([
      { path: 'spec.retirements[0].reassign_owned_to', message: MESSAGES.selfReassign },
    ]);
  });

  it('a retired role cannot be a member, an owner or a reassign target', () => {
    expect(
      errors({
        default_owner: 'old',
        roles: [{ name: 'grp' }],
        schemas: [{ name: 's', owner: 'old' }],
        default_privileges: [{ owner: 'old', schema: 's', grant: [] }],
        memberships: [{ role: 'grp', members: [{ name: 'old' }] }],
        retirements: [{ role: 'old' }, { role: 'older', reassign_owned_to: 'old' }],
      }),
    ).toEqual([
      { path: 'spec.default_owner', message: MESSAGES.retiredReferenced('old', 'default_owner') },
      { path: 'spec.schemas[0].owner', message: MESSAGES.retiredReferenced('old', 'a schema owner') },
      {
        path: 'spec.default_privileges[0].owner',
        message: MESSAGES.retiredReferenced('old', 'a default privilege owner'),
      },
      { path: 'spec.memberships[0].members[0].name', message: MESSAGES.retiredReferenced('old', 'a member') },
      {
        path: 'spec.retirements[1].reassign_owned_to',
        message: MESSAGES.retiredReferenced('old', 'a reassign target'),
      },
    ]);
  });

  it('predefined pg_* roles cannot be retired', () => {
    expect(errors({ retirements: [{ role: 'pg_monitor' }] })).toEqual([
      { path: 'spec.retirements[0].role', message: MESSAGES.retirePredefined },
    ]);
  });
});
