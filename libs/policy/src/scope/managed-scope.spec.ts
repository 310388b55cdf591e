// Managed scope (docs/catalog.md, "What it reads"): what inspection reads for a policy, derived from its desired state.

import type { PolicyContent } from '../model/index.js';
import { expandPolicy } from '../expansion/expand-policy.js';
import { deriveManagedScope } from './managed-scope.js';

function scopeOf(content: PolicyContent) {
  const result = expandPolicy(content, { policyName: 'p' });
  if (!result.ok) throw new Error(JSON.stringify(result.errors));
  return deriveManagedScope(result.desired);
}

const content: PolicyContent = {
  default_owner: 'owner',
  roles: [{ name: 'owner' }, { name: 'app', login: true }, { name: 'ext', external: true }],
  profiles: {
    viewer: {
      grants: [
        { object: { type: 'schema' }, privileges: ['USAGE'] },
        { object: { type: 'table' }, privileges: ['SELECT'] },
      ],
    },
  },
  schemas: [
    { name: 'sales', profiles: ['viewer'] },
    { name: 'hr', owner: null },
  ],
  grants: [
    {
      role: 'app',
      object: { type: 'function', schema: 'util', name: 'f(integer)' },
      privileges: ['EXECUTE'],
    },
    { role: 'app', object: { type: 'function', schema: 'util', name: '*' }, privileges: ['EXECUTE'] },
    {
      role: 'PUBLIC',
      object: { type: 'function', schema: 'util', name: 'f(integer)' },
      privileges: ['EXECUTE'],
      ensure: 'absent',
    },
    { role: 'PUBLIC', object: { type: 'schema', name: 'public' }, privileges: ['CREATE'], ensure: 'absent' },
    { role: 'app', object: { type: 'database', name: 'orders' }, privileges: ['CONNECT'] },
    {
      role: 'ext',
      object: { type: 'table', schema: 'audit', name: '*' },
      privileges: ['SELECT'],
      ensure: 'absent',
    },
  ],
  default_privileges: [
    {
      scope: { type: 'global' },
      grant: [{ on_type: 'function', privileges: ['EXECUTE'], role: 'PUBLIC', ensure: 'absent' }],
    },
    { schema: 'reports', grant: [{ on_type: 'table', privileges: ['SELECT'], role: 'app' }] },
  ],
  memberships: [
    { role: 'pg_read_all_stats', members: [{ name: 'app' }] },
    { role: 'ext', members: [{ name: 'app' }] },
  ],
  retirements: [{ role: 'legacy' }],
};

describe('deriveManagedScope', () => {
  const scope = scopeOf(content);

  it('roles: every expanded role (generated, one-off and external) plus retirement roles', () => {
    expect(scope.roles).toEqual(['app', 'ext', 'legacy', 'owner', 'sales-viewer']);
  });

  it('membership_grantors: pg_* roles named as granted roles only', () => {
    expect(scope.membership_grantors).toEqual(['pg_read_all_stats']);
  });

  it('membership_grantors: an exclusive pg_* stanza with no members is read, so its live members are revoked', () => {
    const empty = scopeOf({ memberships: [{ role: 'pg_monitor', exclusive: true, members: [] }] });
    expect(empty.membership_grantors).toEqual(['pg_monitor']);
  });

  it('schemas: bindings + schemas named by grants (schema, or name for schema grants) + schema-scoped defaults', () => {
    expect(scope.schemas).toEqual(['audit', 'hr', 'public', 'reports', 'sales', 'util']);
  });

  it('owned_schemas: schemas whose owner the policy declares (binding owner or default_owner)', () => {
    expect(scope.owned_schemas).toEqual(['hr', 'sales']);
  });

  it('wildcards: present * grants on relation-like types, one per (grantee, type, schema); absent wildcards excluded', () => {
    expect(scope.wildcards).toEqual([
      { grantee: 'app', object_type: 'function', schema: 'util', privileges: ['EXECUTE'] },
      { grantee: 'sales-viewer', object_type: 'table', schema: 'sales', privileges: ['SELECT'] },
    ]);
  });

  it('public_objects: every PUBLIC rule, present or absent, with its privileges', () => {
    expect(scope.public_objects).toEqual([
      { object_type: 'function', schema: 'util', name: 'f(integer)', privileges: ['EXECUTE'] },
      { object_type: 'schema', schema: null, name: 'public', privileges: ['CREATE'] },
    ]);
  });

  it('default_privilege_scopes: (owner, scope, on_type) with the privileges PUBLIC rules name', () => {
    expect(scope.default_privilege_scopes).toEqual([
      { owner: 'owner', scope: { type: 'global' }, on_type: 'function', public_privileges: ['EXECUTE'] },
      {
        owner: 'owner',
        scope: { type: 'schema', schema: 'reports' },
        on_type: 'table',
        public_privileges: [],
      },
    ]);
  });

  it('database privileges are read only when a database grant exists, for the names it targets', () => {
    expect(scope.include_database_privileges).toBe(true);
    expect(scope.database_targets).toEqual(['orders']);
    const none = scopeOf({ roles: [{ name: 'a' }] });
    expect(none.include_database_privileges).toBe(false);
    expect(none.database_targets).toEqual([]);
  });

  it('function_signatures: named functions (not *) for to_regprocedure normalisation', () => {
    expect(scope.function_signatures).toEqual([{ schema: 'util', name: 'f(integer)' }]);
  });

  it('a role removed from the manifest is forgotten (not in scope) unless retired', () => {
    const without = scopeOf({
      ...content,
      roles: content.roles!.filter((r) => r.name !== 'ext'),
      grants: [],
      memberships: [],
    });
    expect(without.roles).not.toContain('ext');
  });
});
