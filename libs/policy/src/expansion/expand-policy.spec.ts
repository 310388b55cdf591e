// Expansion per spec "Schema binding", "Profile", "Role definition" and docs/policy-validation.md: generated names,
// placeholders, owners, password sources, normalised attributes, and the canonical order of every list.

import type { DesiredState, PolicyContent } from '../model/index.js';
import { MESSAGES } from '../validation/messages.js';
import { expandPolicy } from './expand-policy.js';

function desired(content: PolicyContent, policyName = 'pol'): DesiredState {
  const result = expandPolicy(content, { policyName });
  if (!result.ok) throw new Error(JSON.stringify(result.errors));
  return result.desired;
}

function errors(content: PolicyContent): readonly { path: string; message: string }[] {
  const result = expandPolicy(content, { policyName: 'pol' });
  return result.ok ? [] : result.errors;
}

const names = (state: DesiredState) => state.roles.map((r) => r.name);

describe('role_pattern resolution: binding -> policy -> {schema}-{profile}', () => {
  const profiles = { viewer: {} };

  it('falls back to {schema}-{profile}', () => {
    expect(names(desired({ profiles, schemas: [{ name: 'sales', profiles: ['viewer'] }] }))).toEqual([
      'sales-viewer',
    ]);
  });

  it('uses the policy-level pattern when the binding has none', () => {
    const content = {
      profiles,
      role_pattern: '{schema}_{profile}_role',
      schemas: [{ name: 'sales', profiles: ['viewer'] }],
    };
    expect(names(desired(content))).toEqual(['sales_viewer_role']);
  });

  it('a binding pattern overrides the policy pattern', () => {
    const content = {
      profiles,
      role_pattern: '{schema}_{profile}',
      schemas: [
        { name: 'sales', profiles: ['viewer'], role_pattern: 'ro-{profile}-{schema}' },
        { name: 'hr', profiles: ['viewer'] },
      ],
    };
    expect(names(desired(content))).toEqual(['hr_viewer', 'ro-viewer-sales']);
  });

  it('a pattern may omit {schema}', () => {
    expect(
      names(
        desired({ profiles, schemas: [{ name: 's', profiles: ['viewer'], role_pattern: 'app_{profile}' }] }),
      ),
    ).toEqual(['app_viewer']);
  });

  it('substitutes in one pass: a schema name containing {profile} stays literal', () => {
    expect(names(desired({ profiles, schemas: [{ name: 'x{profile}', profiles: ['viewer'] }] }))).toEqual([
      'x{profile}-viewer',
    ]);
  });
});

describe('63-byte limit after role_pattern substitution', () => {
  it('rejects a generated name over 63 bytes, at the binding x profile path', () => {
    const schema = 's'.repeat(57);
    expect(errors({ profiles: { viewer: {} }, schemas: [{ name: schema, profiles: ['viewer'] }] })).toEqual([
      { path: 'spec.schemas[0].profiles[0]', message: MESSAGES.generatedNameTooLong(`${schema}-viewer`, 64) },
    ]);
  });

  it('accepts exactly 63 bytes', () => {
    const schema = 's'.repeat(56);
    expect(
      names(desired({ profiles: { viewer: {} }, schemas: [{ name: schema, profiles: ['viewer'] }] })),
    ).toEqual([`${schema}-viewer`]);
  });

  it('counts multi-byte characters: 28 x é (56 bytes) + "-viewer" is 63 bytes, 29 x é is 65', () => {
    expect(
      errors({ profiles: { viewer: {} }, schemas: [{ name: 'é'.repeat(28), profiles: ['viewer'] }] }),
    ).toEqual([]);
    expect(
      errors({ profiles: { viewer: {} }, schemas: [{ name: 'é'.repeat(29), profiles: ['viewer'] }] }),
    ).toEqual([
      {
        path: 'spec.schemas[0].profiles[0]',
        message: MESSAGES.generatedNameTooLong(`${'é'.repeat(29)}-viewer`, 65),
      },
    ]);
  });

  it('rejects generated names that are PUBLIC or start with pg_', () => {
    expect(
      errors({
        profiles: { PUBLIC: {} },
        schemas: [{ name: 's', profiles: ['PUBLIC'], role_pattern: '{profile}' }],
      }),
    ).toEqual([
      { path: 'spec.schemas[0].profiles[0]', message: MESSAGES.publicReserved('a generated role name') },
    ]);
    expect(
      errors({
        profiles: { p: {} },
        schemas: [{ name: 's', profiles: ['p'], role_pattern: 'pg_{profile}' }],
      }),
    ).toEqual([{ path: 'spec.schemas[0].profiles[0]', message: MESSAGES.generatedPgPrefix('pg_p') }]);
  });
});

describe('generated roles', () => {
  it('carry the fixed comment, profile login/inherit and PostgreSQL defaults otherwise', () => {
    const state = desired({
      profiles: { editor: { login: true, inherit: false } },
      schemas: [{ name: 'app', profiles: ['editor'] }],
    });
    expect(state.roles).toEqual([
      {
        name: 'app-editor',
        state: {
          login: true,
          superuser: false,
          createdb: false,
          createrole: false,
          inherit: false,
          replication: false,
          bypassrls: false,
          connection_limit: -1,
          comment: "Generated from profile 'editor' for schema 'app'",
          password_valid_until: null,
          config: {},
        },
        external: false,
        preserve_undeclared_grants: false,
        password: null,
        generated_from: { profile: 'editor', schema: 'app' },
      },
    ]);
  });

  it('substitute {schema} and {profile} in config values', () => {
    const profiles = {
      editor: { config: { search_path: '{schema}, public', 'app.tag': '{profile}@{schema}' } },
    };
    const state = desired({
      profiles,
      schemas: [
        { name: 'sales', profiles: ['editor'] },
        { name: 'My Schema', profiles: ['editor'] },
      ],
    });
    expect(state.roles.map((r) => r.state.config)).toEqual([
      { search_path: '"My Schema", public', 'app.tag': 'editor@My Schema' },
      { search_path: 'sales, public', 'app.tag': 'editor@sales' },
    ]);
  });

  it('config values stay within 256 characters after substitution', () => {
    const profiles = { p: { config: { 'app.tag': `${'x'.repeat(240)}{schema}` } } };
    expect(
      errors({
        profiles,
        schemas: [
          { name: 'short', profiles: ['p'] },
          { name: 'a_rather_long_schema', profiles: ['p'] },
        ],
      }),
    ).toEqual([
      {
        path: 'spec.profiles.p.config["app.tag"]',
        message: MESSAGES.configValueTooLongAfterSubstitution('a_rather_long_schema'),
      },
    ]);
  });

  it('placeholders in config names fail the name rule', () => {
    expect(errors({ profiles: { p: { config: { '{schema}.x': 'v' } } } })).toEqual([
      { path: 'spec.profiles.p.config["{schema}.x"]', message: MESSAGES.configName },
    ]);
  });

  it('expand profile grant templates onto the bound schema', () => {
    const profiles = {
      editor: {
        grants: [
          { object: { type: 'schema' as const }, privileges: ['USAGE' as const] },
          { object: { type: 'table' as const }, privileges: ['SELECT' as const, 'INSERT' as const] },
          { object: { type: 'sequence' as const, name: 'ids' }, privileges: ['USAGE' as const] },
        ],
      },
    };
    expect(desired({ profiles, schemas: [{ name: 'app', profiles: ['editor'] }] }).grants).toEqual([
      { grantee: 'app-editor', object_type: 'schema', schema: null, name: 'app', privileges: ['USAGE'] },
      { grantee: 'app-editor', object_type: 'sequence', schema: 'app', name: 'ids', privileges: ['USAGE'] },
      {
        grantee: 'app-editor',
        object_type: 'table',
        schema: 'app',
        name: '*',
        privileges: ['INSERT', 'SELECT'],
      },
    ]);
  });

  it('emit schema-scoped default privileges owned by binding owner -> default_owner, granted to the generated role', () => {
    const profiles = {
      editor: {
        default_privileges: [
          { on_type: 'table' as const, privileges: ['SELECT' as const] },
          { on_type: 'sequence' as const, privileges: ['USAGE' as const], role: 'auditor' },
        ],
      },
    };
    const state = desired({
      default_owner: 'migrator',
      roles: [{ name: 'migrator' }, { name: 'owner_b' }, { name: 'auditor' }],
      profiles,
      schemas: [
        { name: 'a', profiles: ['editor'] },
        { name: 'b', profiles: ['editor'], owner: 'owner_b' },
      ],
    });
    expect(state.default_privileges).toEqual([
      {
        owner: 'migrator',
        scope: { type: 'schema', schema: 'a' },
        on_type: 'sequence',
        grantee: 'auditor',
        privileges: ['USAGE'],
      },
      {
        owner: 'migrator',
        scope: { type: 'schema', schema: 'a' },
        on_type: 'table',
        grantee: 'a-editor',
        privileges: ['SELECT'],
      },
      {
        owner: 'owner_b',
        scope: { type: 'schema', schema: 'b' },
        on_type: 'sequence',
        grantee: 'auditor',
        privileges: ['USAGE'],
      },
      {
        owner: 'owner_b',
        scope: { type: 'schema', schema: 'b' },
        on_type: 'table',
        grantee: 'b-editor',
        privileges: ['SELECT'],
      },
    ]);
  });

  it('a profile default granted to the binding owner is rejected', () => {
    const profiles = {
      p: { default_privileges: [{ on_type: 'table' as const, privileges: ['SELECT' as const], role: 'o' }] },
    };
    expect(
      errors({ roles: [{ name: 'o' }], profiles, schemas: [{ name: 's', owner: 'o', profiles: ['p'] }] }),
    ).toEqual([{ path: 'spec.schemas[0].profiles[0]', message: MESSAGES.defaultGranteeIsOwner('o') }]);
  });
});

describe('schema owners and default_owner', () => {
  it('schema owner = binding owner -> default_owner -> null, with owner privileges {CREATE, USAGE} when owned', () => {
    const state = desired({
      default_owner: 'dflt',
      roles: [{ name: 'dflt' }, { name: 'mine' }],
      schemas: [{ name: 'b', owner: 'mine' }, { name: 'a' }],
    });
    expect(state.schemas).toEqual([
      { name: 'a', owner: 'dflt', owner_privileges: ['CREATE', 'USAGE'] },
      { name: 'b', owner: 'mine', owner_privileges: ['CREATE', 'USAGE'] },
    ]);
    expect(desired({ schemas: [{ name: 'a' }] }).schemas).toEqual([
      { name: 'a', owner: null, owner_privileges: [] },
    ]);
  });

  it('default_owner is copied into default blocks that lack an owner', () => {
    const state = desired({
      default_owner: 'dflt',
      roles: [{ name: 'dflt' }, { name: 'app' }],
      default_privileges: [
        { scope: { type: 'global' }, grant: [{ on_type: 'function', privileges: ['EXECUTE'], role: 'app' }] },
      ],
    });
    expect(state.default_privileges).toEqual([
      {
        owner: 'dflt',
        scope: { type: 'global' },
        on_type: 'function',
        grantee: 'app',
        privileges: ['EXECUTE'],
      },
    ]);
    expect(state.warnings).toEqual([]);
  });

  it('an undeclared default_owner is a warning, not an error', () => {
    const state = desired({ default_owner: 'postgres', schemas: [{ name: 'a' }] });
    expect(state.warnings).toEqual([MESSAGES.undeclaredDefaultOwner('postgres')]);
    expect(state.schemas[0]!.owner).toBe('postgres');
  });
});

describe('one-off roles', () => {
  it('password generate defaults: secret {policy}-gen-{role}, key password, length 32', () => {
    const state = desired({ roles: [{ name: 'app', login: true, password: { generate: {} } }] }, 'orders');
    expect(state.roles[0]!.password).toEqual({
      kind: 'generate',
      secretName: 'orders-gen-app',
      secretKey: 'password',
      length: 32,
    });
  });

  it('warns when the default Secret name {policy}-gen-{role} is not a valid Kubernetes name', () => {
    const state = desired(
      {
        roles: [
          { name: 'App_User', login: true, password: { generate: {} } },
          { name: 'ok', login: true, password: { generate: {} } },
        ],
      },
      'orders',
    );
    expect(state.warnings).toEqual([MESSAGES.generatedSecretName('App_User', 'orders-gen-App_User')]);
    const named = desired({
      roles: [{ name: 'App_User', login: true, password: { generate: { secretName: 'app-user' } } }],
    });
    expect(named.warnings).toEqual([]);
  });

  it('password generate keeps explicit values', () => {
    const password = { generate: { length: 64, secretKey: 'pw', secretName: 'custom' } };
    expect(desired({ roles: [{ name: 'app', login: true, password }] }).roles[0]!.password).toEqual({
      kind: 'generate',
      secretName: 'custom',
      secretKey: 'pw',
      length: 64,
    });
  });

  it('password secretRef: secretKey defaults to the role name', () => {
    const roles = [
      { name: 'app', login: true, password: { secretRef: { name: 'creds' } } },
      { name: 'etl', login: true, password: { secretRef: { name: 'creds' }, secretKey: 'ETL_PASSWORD' } },
    ];
    expect(desired({ roles }).roles.map((r) => r.password)).toEqual([
      { kind: 'secret_ref', secretName: 'creds', secretKey: 'app' },
      { kind: 'secret_ref', secretName: 'creds', secretKey: 'ETL_PASSWORD' },
    ]);
  });

  it('an omitted attribute means the PostgreSQL default (enforced), an omitted comment means no comment', () => {
    expect(desired({ roles: [{ name: 'r' }] }).roles[0]!.state).toEqual({
      login: false,
      superuser: false,
      createdb: false,
      createrole: false,
      inherit: true,
      replication: false,
      bypassrls: false,
      connection_limit: -1,
      comment: null,
      password_valid_until: null,
      config: {},
    });
  });

  it('password_valid_until is normalised to UTC whole seconds with Z', () => {
    const at = (value: string) =>
      desired({ roles: [{ name: 'r', password_valid_until: value }] }).roles[0]!.state.password_valid_until;
    expect(at('2025-12-31T05:00:00.123+05:00')).toBe('2025-12-31T00:00:00Z');
    expect(at('2025-12-31T00:00:00Z')).toBe('2025-12-31T00:00:00Z');
    expect(at('2025-06-30T20:30:00-03:30')).toBe('2025-07-01T00:00:00Z');
    expect(at('2025-12-31T23:59:59.9999999Z')).toBe('2026-01-01T00:00:00Z');
    expect(at('2025-12-31T23:59:59.999999Z')).toBe('2025-12-31T23:59:59Z');
  });

  it('config keys are lowercased and list GUCs canonicalised as PostgreSQL stores them', () => {
    const config = { Search_Path: 'a,"My Schema" , $user', Statement_Timeout: '30s', temp_tablespaces: '' };
    expect(desired({ roles: [{ name: 'r', config }] }).roles[0]!.state.config).toEqual({
      search_path: 'a, "My Schema", "$user"',
      statement_timeout: '30s',
      temp_tablespaces: '',
    });
  });

  it('keeps a __proto__ config key and profile name as ordinary entries (JSON input is untrusted)', () => {
    const content = JSON.parse(
      '{"roles":[{"name":"r","config":{"__proto__":"x"}}],"profiles":{"__proto__":{"login":true}},"schemas":[{"name":"s","profiles":["__proto__"]}]}',
    ) as PolicyContent;
    const state = desired(content);
    expect(Object.entries(state.roles.find((r) => r.name === 'r')!.state.config)).toEqual([
      ['__proto__', 'x'],
    ]);
    expect(state.roles.find((r) => r.name === 's-__proto__')!.state.login).toBe(true);
  });

  it('external roles keep external and never get a password; preserve_undeclared_grants is carried', () => {
    const state = desired({
      roles: [
        { name: 'ext', external: true },
        { name: 'keep', preserve_undeclared_grants: true },
      ],
    });
    expect(state.roles.map((r) => [r.name, r.external, r.preserve_undeclared_grants, r.password])).toEqual([
      ['ext', true, false, null],
      ['keep', false, true, null],
    ]);
  });
});

describe('grants, memberships and retirements', () => {
  it('schema grant targets key on the schema name whether written as name or schema', () => {
    const state = desired({
      roles: [{ name: 'a' }, { name: 'b' }],
      grants: [
        { role: 'a', object: { type: 'schema', name: 's' }, privileges: ['USAGE'] },
        { role: 'b', object: { type: 'schema', schema: 's' }, privileges: ['USAGE'] },
      ],
    });
    expect(state.grants.map((g) => [g.grantee, g.schema, g.name])).toEqual([
      ['a', null, 's'],
      ['b', null, 's'],
    ]);
  });

  it('entries with the same key merge privileges; absences go to grant_absences', () => {
    const t = { type: 'table' as const, schema: 's', name: 't' };
    const state = desired({
      roles: [{ name: 'a' }],
      grants: [
        { role: 'a', object: t, privileges: ['UPDATE', 'SELECT'] },
        { role: 'a', object: t, privileges: ['INSERT', 'SELECT'] },
        { role: 'a', object: t, privileges: ['DELETE'], ensure: 'absent' },
      ],
    });
    expect(state.grants).toEqual([
      {
        grantee: 'a',
        object_type: 'table',
        schema: 's',
        name: 't',
        privileges: ['INSERT', 'SELECT', 'UPDATE'],
      },
    ]);
    expect(state.grant_absences).toEqual([
      { grantee: 'a', object_type: 'table', schema: 's', name: 't', privileges: ['DELETE'] },
    ]);
  });

  it('memberships: inherit defaults to true and admin to false', () => {
    const state = desired({
      roles: [{ name: 'grp' }],
      memberships: [
        {
          role: 'grp',
          members: [
            { name: 'u2', admin: true },
            { name: 'u1', inherit: false },
          ],
        },
      ],
    });
    expect(state.memberships).toEqual([
      { role: 'grp', member: 'u1', inherit: false, admin: false },
      { role: 'grp', member: 'u2', inherit: true, admin: true },
    ]);
  });

  it('exclusive membership roles are listed', () => {
    const state = desired({
      memberships: [{ role: 'pg_read_all_data', exclusive: true, members: [{ name: 'u' }] }],
    });
    expect(state.exclusive_membership_roles).toEqual(['pg_read_all_data']);
  });

  it('retirements resolve their defaults', () => {
    expect(
      desired({
        retirements: [{ role: 'old', reassign_owned_to: 'new', drop_owned: true }, { role: 'gone' }],
      }).retirements,
    ).toEqual([
      { role: 'gone', reassign_owned_to: null, drop_owned: false, terminate_sessions: false },
      { role: 'old', reassign_owned_to: 'new', drop_owned: true, terminate_sessions: false },
    ]);
  });

  it('reconciliation_mode defaults to authoritative', () => {
    expect(desired({}).reconciliation_mode).toBe('authoritative');
    expect(desired({ reconciliation_mode: 'adopt' }).reconciliation_mode).toBe('adopt');
  });
});

describe('canonical order', () => {
  it('sorts roles by code point (astral after BMP), grants with PUBLIC first', () => {
    const state = desired({
      roles: [{ name: '\u{1F600}' }, { name: '\uFFFD' }, { name: 'B' }, { name: 'a' }],
      grants: [
        { role: 'a', object: { type: 'table', schema: 's', name: 't' }, privileges: ['SELECT'] },
        { role: 'PUBLIC', object: { type: 'table', schema: 's', name: 't' }, privileges: ['SELECT'] },
        { role: 'B', object: { type: 'table', schema: 's', name: 't' }, privileges: ['SELECT'] },
      ],
    });
    expect(names(state)).toEqual(['B', 'a', '\uFFFD', '\u{1F600}']);
    expect(state.grants.map((g) => g.grantee)).toEqual(['PUBLIC', 'B', 'a']);
  });

  it('sorts default privileges with global scope first', () => {
    const item = { on_type: 'table' as const, privileges: ['SELECT' as const], role: 'app' };
    const state = desired({
      default_owner: 'o',
      roles: [{ name: 'o' }, { name: 'app' }],
      default_privileges: [
        { schema: 'a', grant: [item] },
        { scope: { type: 'global' }, grant: [item] },
      ],
    });
    expect(state.default_privileges.map((d) => d.scope)).toEqual([
      { type: 'global' },
      { type: 'schema', schema: 'a' },
    ]);
  });
});
