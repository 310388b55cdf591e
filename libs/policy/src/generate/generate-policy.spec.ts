// generate: live access -> policy content and YAML (pure). Profile suggestions: suggest-profiles.spec.ts;
// the live round trip: libs/catalog/src/generate-roundtrip.int-spec.ts.

import { parse } from 'yaml';

import { liveRole } from '../diff/test-support/builders.js';
import { expandPolicy } from '../expansion/expand-policy.js';
import { boundWarnings } from './bounds.js';
import { generatePolicy } from './generate-policy.js';
import { globPattern, selectRoles } from './role-selection.js';
import { databasePublic, grant, render, source, table } from './test-support/sources.js';

describe('selectRoles', () => {
  const roles = [
    { name: 'app_read', bootstrap: false },
    { name: 'app_write', bootstrap: false },
    { name: 'app_admin', bootstrap: false },
    { name: 'pg_monitor', bootstrap: false },
    { name: 'postgres', bootstrap: true },
    { name: 'other', bootstrap: false },
  ];

  it('keeps names matching a --roles glob and no --exclude glob', () => {
    expect(selectRoles(roles, ['app_*'], ['*_admin']).selected).toEqual(['app_read', 'app_write']);
    expect(selectRoles(roles, ['app_????', 'other'], []).selected).toEqual(['app_read', 'other']);
  });

  it('always leaves out predefined roles and the bootstrap superuser, and says so', () => {
    const result = selectRoles(roles, ['*'], []);
    expect(result.selected).toEqual(['app_admin', 'app_read', 'app_write', 'other']);
    expect(result.left_out).toEqual({ predefined: ['pg_monitor'], bootstrap: ['postgres'] });
  });

  it('treats every character other than * and ? literally', () => {
    expect(globPattern('a.b(c)').test('a.b(c)')).toBe(true);
    expect(globPattern('a.b').test('axb')).toBe(false);
  });
});

describe('generatePolicy', () => {
  it('writes only attributes that differ from PostgreSQL defaults, with config and valid_until', () => {
    const generated = generatePolicy(
      source({
        snapshot: {
          roles: [
            liveRole('app', {
              login: true,
              connection_limit: 5,
              comment: 'the app',
              config: { statement_timeout: '30s', search_path: 'app, public' },
              password_valid_until: '2031-01-01T00:00:00Z',
            }),
            liveRole('batch', { inherit: false }),
          ],
        },
      }),
      { mode: 'additive' },
    );
    expect(generated.content.roles).toEqual([
      {
        name: 'app',
        login: true,
        connection_limit: 5,
        comment: 'the app',
        config: { search_path: 'app, public', statement_timeout: '30s' },
        password_valid_until: '2031-01-01T00:00:00Z',
      },
      { name: 'batch', inherit: false },
    ]);
    expect(generated.content.reconciliation_mode).toBe('additive');
  });

  it('never exports a password: the role gets a comment on how to manage it instead', () => {
    const generated = generatePolicy(
      source({ snapshot: { roles: [liveRole('app', { login: true })] }, password_roles: ['app'] }),
      { mode: 'authoritative' },
    );
    expect(generated.content.roles![0]).not.toHaveProperty('password');
    const yaml = render(generated);
    expect(yaml).toMatch(/# has a password, which is never exported/);
    expect(yaml).toMatch(/secretRef/);
  });

  it('warns when it cannot tell which roles have passwords', () => {
    const generated = generatePolicy(
      source({ snapshot: { roles: [liveRole('app')] }, password_roles: null }),
      { mode: 'additive' },
    );
    expect(generated.warnings.join('\n')).toMatch(/whether roles have passwords could not be read/);
  });

  it('collapses to * only where every object of the kind in the schema has the same grant', () => {
    const generated = generatePolicy(
      source({
        snapshot: {
          roles: [liveRole('reader'), liveRole('writer')],
          inventory: [
            table('a', 't1'),
            table('a', 't2'),
            table('a', 'mine', 'writer'),
            table('b', 't1'),
            table('b', 't2'),
          ],
          grants: [
            databasePublic,
            grant('reader', 'a', 't1', ['SELECT']),
            grant('reader', 'a', 't2', ['SELECT']),
            grant('reader', 'a', 'mine', ['SELECT']),
            grant('reader', 'b', 't1', ['SELECT']),
            grant('reader', 'b', 't2', ['INSERT', 'SELECT']),
            // writer owns a.mine: ownership counts as holding the grant
            grant('writer', 'a', 't1', ['INSERT']),
            grant('writer', 'a', 't2', ['INSERT']),
          ],
        },
      }),
      { mode: 'authoritative' },
    );
    expect(generated.content.grants).toEqual([
      { role: 'reader', object: { type: 'table', schema: 'a', name: '*' }, privileges: ['SELECT'] },
      { role: 'reader', object: { type: 'table', schema: 'b', name: 't1' }, privileges: ['SELECT'] },
      {
        role: 'reader',
        object: { type: 'table', schema: 'b', name: 't2' },
        privileges: ['INSERT', 'SELECT'],
      },
      { role: 'writer', object: { type: 'table', schema: 'a', name: '*' }, privileges: ['INSERT'] },
    ]);
    expect(generated.notes.header.join('\n')).toMatch(/objects created later get them too/);
  });

  it('exports every member of a selected role and selected members of pg_* roles, one entry per edge', () => {
    const generated = generatePolicy(
      source({
        snapshot: {
          roles: [liveRole('app'), liveRole('readers')],
          memberships: [
            { role: 'pg_monitor', member: 'app', inherit: true, admin: false, grantor: null },
            { role: 'pg_monitor', member: 'someone_else', inherit: true, admin: false, grantor: null },
            { role: 'readers', member: 'app', inherit: false, admin: true, grantor: null },
            { role: 'readers', member: 'app', inherit: true, admin: false, grantor: 'other' },
            { role: 'readers', member: 'unselected', inherit: true, admin: false, grantor: null },
          ],
        },
      }),
      { mode: 'authoritative' },
    );
    expect(generated.content.memberships).toEqual([
      { role: 'pg_monitor', members: [{ name: 'app' }] },
      { role: 'readers', members: [{ name: 'app', inherit: false, admin: true }, { name: 'unselected' }] },
    ]);
  });

  it('reports what the spec cannot express on stderr and in the YAML, never silently', () => {
    const generated = generatePolicy(
      source({
        snapshot: { roles: [liveRole('app')] },
        inexpressible: [
          { kind: 'column_privilege', grantee: 'app', target: 'a.t.email', privilege: 'SELECT' },
          {
            kind: 'membership_outside_selection',
            grantee: 'app',
            target: 'role admins',
            privilege: 'MEMBER',
          },
          { kind: 'membership_set_option', grantee: 'app', target: 'role readers', privilege: 'SET FALSE' },
        ],
      }),
      { mode: 'additive' },
    );
    expect(generated.warnings).toEqual([
      '"app" holds SELECT on a.t.email (column privilege): the spec cannot express it; not exported, and plans neither grant nor revoke it',
      '"app" is a member of role admins: not exported (add that role to --roles to manage it)',
      '"app" is a member of role readers WITH SET FALSE: the membership is exported, the SET option cannot be expressed (plans leave it as it is)',
    ]);
    expect(render(generated)).toContain('# - "app" holds SELECT on a.t.email (column privilege)');
  });

  it('declares schema owners only when the owner is selected and holds CREATE and USAGE on it', () => {
    const generated = generatePolicy(
      source({
        snapshot: {
          roles: [liveRole('owner')],
          schemas: [
            { name: 'a', owner: 'owner', owner_privileges: ['CREATE', 'USAGE'] },
            { name: 'b', owner: 'owner', owner_privileges: ['USAGE'] },
            { name: 'public', owner: 'pg_database_owner', owner_privileges: ['CREATE', 'USAGE'] },
          ],
        },
      }),
      { mode: 'authoritative' },
    );
    expect(generated.content.schemas).toEqual([
      { name: 'a', owner: 'owner' },
      { name: 'b' },
      { name: 'public' },
    ]);
    expect(generated.warnings.join('\n')).toMatch(/schema "b": owner "owner" lacks CREATE/);
    expect(render(generated)).toMatch(/# owned by "pg_database_owner", which is outside --roles/);
  });

  it('prints the same YAML whatever order the catalog returned rows in, and the YAML reads back as valid content', () => {
    const roles = [liveRole('b'), liveRole('a', { login: true })];
    const grants = [databasePublic, grant('b', 's', 't', ['SELECT']), grant('a', 's', 't', ['INSERT'])];
    const defaults = [
      {
        owner: 'a',
        scope: { type: 'schema' as const, schema: 's' },
        on_type: 'table' as const,
        grantee: 'b',
        privileges: ['SELECT' as const],
      },
      {
        owner: 'a',
        scope: { type: 'global' as const },
        on_type: 'function' as const,
        grantee: 'b',
        privileges: ['EXECUTE' as const],
      },
    ];
    const inventory = [table('s', 't'), table('s', 'u')];
    const one = render(
      generatePolicy(source({ snapshot: { roles, grants, default_privileges: defaults, inventory } }), {
        mode: 'authoritative',
      }),
    );
    const two = render(
      generatePolicy(
        source({
          snapshot: {
            roles: [...roles].reverse(),
            grants: [...grants].reverse(),
            default_privileges: [...defaults].reverse(),
            inventory,
          },
        }),
        { mode: 'authoritative' },
      ),
    );
    expect(one).toBe(two);
    const manifest = parse(one) as { kind: string; metadata: unknown; spec: Record<string, unknown> };
    expect(manifest.kind).toBe('PostgresPolicy');
    expect(manifest.metadata).toEqual({ name: 'shop', namespace: 'shop' });
    expect(manifest.spec['connection']).toEqual({ secretRef: { name: 'shop-db' } });
    const { connection: _connection, approval: _approval, ...content } = manifest.spec;
    expect(expandPolicy(content, { policyName: 'shop' }).ok).toBe(true);
  });
});

describe('boundWarnings', () => {
  it("says when the content exceeds the spec's collection bounds, and how to split it", () => {
    const roles = Array.from({ length: 1025 }, (_, i) => ({ name: `r${i}` }));
    expect(boundWarnings({ roles })).toEqual([
      "spec.roles has 1025 entries, over the spec's bound of 1024: the API server will reject this policy; split the roles into several policies (--roles / --exclude)",
    ]);
    expect(boundWarnings({ roles: roles.slice(0, 10) })).toEqual([]);
  });
});

describe('PUBLIC', () => {
  it('writes what PUBLIC holds beyond the built-ins as grants, and each lost built-in as ensure: absent', () => {
    const generated = generatePolicy(
      source({
        snapshot: {
          roles: [liveRole('owner')],
          schemas: [{ name: 'public', owner: 'owner', owner_privileges: ['CREATE', 'USAGE'] }],
          inventory: [
            { kind: 'function', schema: 'public', name: 'f(integer)', owner: 'owner' },
            { kind: 'function', schema: 'public', name: 'g()', owner: 'owner' },
            table('public', 't'),
          ],
          grants: [
            { ...databasePublic, privileges: ['CONNECT'] },
            { object_type: 'schema', schema: null, name: 'public', grantee: 'PUBLIC', privileges: ['USAGE'] },
            {
              object_type: 'function',
              schema: 'public',
              name: 'g()',
              grantee: 'PUBLIC',
              privileges: ['EXECUTE'],
            },
            grant('PUBLIC', 'public', 't', ['SELECT']),
          ],
          default_privileges: [
            {
              owner: 'owner',
              scope: { type: 'schema', schema: 'public' },
              on_type: 'table',
              grantee: 'PUBLIC',
              privileges: ['SELECT'],
            },
          ],
        },
        global_default_pairs: [{ owner: 'owner', on_type: 'function' }],
      }),
      { mode: 'authoritative' },
    );
    expect(generated.content.grants).toEqual([
      {
        role: 'PUBLIC',
        ensure: 'absent',
        object: { type: 'database', name: 'app' },
        privileges: ['TEMPORARY'],
      },
      { role: 'PUBLIC', object: { type: 'schema', name: 'public' }, privileges: ['USAGE'] },
      {
        role: 'PUBLIC',
        ensure: 'absent',
        object: { type: 'function', schema: 'public', name: 'f(integer)' },
        privileges: ['EXECUTE'],
      },
      { role: 'PUBLIC', object: { type: 'table', schema: 'public', name: 't' }, privileges: ['SELECT'] },
    ]);
    expect(generated.content.default_privileges).toEqual([
      {
        owner: 'owner',
        scope: { type: 'global' },
        grant: [{ ensure: 'absent', on_type: 'function', privileges: ['EXECUTE'], role: 'PUBLIC' }],
      },
      {
        owner: 'owner',
        schema: 'public',
        grant: [{ on_type: 'table', privileges: ['SELECT'], role: 'PUBLIC' }],
      },
    ]);
  });
});
