// Focused tests for the diff rules of engine notes 3.2 and the edge cases of 7.2 that live in the diff.
// Each test is named after the rule it pins; plans are computed in authoritative mode unless stated.

import type { Change } from '../model/change.js';
import type { GrantEntry } from '../model/state.js';
import { computePlan } from '../plan/compute-plan.js';
import { catalogSnapshot, desiredRole, desiredState, liveRole, planInput } from './test-support/builders.js';
import { diff } from './diff.js';

const g = (
  grantee: string,
  object_type: GrantEntry['object_type'],
  schema: string | null,
  name: string | null,
  privileges: GrantEntry['privileges'],
  grantor?: string | null,
): GrantEntry => ({
  grantee,
  object_type,
  schema,
  name,
  privileges,
  ...(grantor === undefined ? {} : { grantor }),
});

const kinds = (changes: readonly Change[]): string[] => changes.map((c) => c.kind);

describe('roles', () => {
  it('creates a missing role with its full state and sets config in a separate alter after all creates', () => {
    const desired = desiredState({
      roles: [desiredRole('b', { login: true, comment: 'hi', config: { role: 'a' } }), desiredRole('a')],
    });
    const plan = computePlan(planInput(desired, catalogSnapshot()));
    expect(plan.changes).toEqual([
      {
        kind: 'create_role',
        name: 'a',
        state: expect.objectContaining({ login: false, inherit: true, comment: null }),
      },
      {
        kind: 'create_role',
        name: 'b',
        state: expect.objectContaining({ login: true, comment: 'hi', connection_limit: -1 }),
      },
      { kind: 'alter_role', name: 'b', attributes: [{ kind: 'set_config', parameter: 'role', value: 'a' }] },
    ]);
    expect(plan.phases).toEqual([
      { phase: 'create', change_indices: [0, 1] },
      { phase: 'alter', change_indices: [2] },
    ]);
  });

  it('enforces an omitted attribute as the PostgreSQL default and clears a live comment the policy omits', () => {
    const desired = desiredState({ roles: [desiredRole('app')] });
    const snapshot = catalogSnapshot({ roles: [liveRole('app', { login: true, comment: 'old' })] });
    expect(diff(desired, snapshot).changes).toEqual([
      { kind: 'alter_role', name: 'app', attributes: [{ kind: 'login', value: false }] },
      { kind: 'set_comment', name: 'app', comment: null },
    ]);
  });

  it('orders attribute entries: flags, connection_limit, valid_until, set_config, reset_config', () => {
    const desired = desiredState({
      roles: [
        desiredRole('app', {
          bypassrls: true,
          login: true,
          connection_limit: 5,
          password_valid_until: '2030-01-01T00:00:00Z',
          config: { work_mem: '64MB', search_path: 'app' },
        }),
      ],
    });
    const snapshot = catalogSnapshot({
      roles: [liveRole('app', { config: { statement_timeout: '30s', work_mem: '4MB', search_path: 'app' } })],
    });
    const [alter] = diff(desired, snapshot).changes;
    expect(alter).toEqual({
      kind: 'alter_role',
      name: 'app',
      attributes: [
        { kind: 'login', value: true },
        { kind: 'bypassrls', value: true },
        { kind: 'connection_limit', value: 5 },
        { kind: 'valid_until', value: '2030-01-01T00:00:00Z' },
        { kind: 'set_config', parameter: 'work_mem', value: '64MB' },
        { kind: 'reset_config', parameter: 'statement_timeout' },
      ],
    });
  });

  it('compares config values as opaque strings (30s is not 30000)', () => {
    const desired = desiredState({ roles: [desiredRole('app', { config: { statement_timeout: '30s' } })] });
    const snapshot = catalogSnapshot({
      roles: [liveRole('app', { config: { statement_timeout: '30000' } })],
    });
    expect(diff(desired, snapshot).changes).toEqual([
      {
        kind: 'alter_role',
        name: 'app',
        attributes: [{ kind: 'set_config', parameter: 'statement_timeout', value: '30s' }],
      },
    ]);
  });

  it('forgets a role removed from the manifest: no drop, no revokes', () => {
    const snapshot = catalogSnapshot({
      roles: [liveRole('gone')],
      grants: [g('gone', 'table', 's', 't', ['SELECT'])],
    });
    expect(diff(desiredState(), snapshot).changes).toEqual([]);
  });
});

describe('schemas', () => {
  it('creates a missing schema with its owner and transfers a differing owner with full owner privileges', () => {
    const desired = desiredState({
      roles: [desiredRole('owner')],
      schemas: [
        { name: 'new', owner: 'owner', owner_privileges: ['CREATE', 'USAGE'] },
        { name: 'old', owner: 'owner', owner_privileges: ['CREATE', 'USAGE'] },
      ],
    });
    const snapshot = catalogSnapshot({
      roles: [liveRole('owner')],
      schemas: [{ name: 'old', owner: 'someone', owner_privileges: ['CREATE', 'USAGE'] }],
    });
    expect(diff(desired, snapshot).changes).toEqual([
      { kind: 'create_schema', name: 'new', owner: 'owner' },
      { kind: 'alter_schema_owner', name: 'old', owner: 'owner' },
      {
        kind: 'ensure_schema_owner_privileges',
        name: 'old',
        owner: 'owner',
        privileges: ['CREATE', 'USAGE'],
      },
    ]);
  });

  it('repairs owner privileges the owner revoked from itself', () => {
    const desired = desiredState({
      roles: [desiredRole('owner')],
      schemas: [{ name: 's', owner: 'owner', owner_privileges: ['CREATE', 'USAGE'] }],
    });
    const snapshot = catalogSnapshot({
      roles: [liveRole('owner')],
      schemas: [{ name: 's', owner: 'owner', owner_privileges: ['USAGE'] }],
    });
    expect(diff(desired, snapshot).changes).toEqual([
      { kind: 'ensure_schema_owner_privileges', name: 's', owner: 'owner', privileges: ['CREATE'] },
    ]);
  });

  it('never touches the owner of a schema declared without one', () => {
    const desired = desiredState({ schemas: [{ name: 's', owner: null, owner_privileges: [] }] });
    const snapshot = catalogSnapshot({ schemas: [{ name: 's', owner: 'x', owner_privileges: [] }] });
    expect(diff(desired, snapshot).changes).toEqual([]);
  });

  it('an owner transfer absorbs the new owner explicit schema grant: no revoke for the incoming owner', () => {
    const desired = desiredState({
      roles: [desiredRole('z'), desiredRole('reader')],
      schemas: [{ name: 's', owner: 'z', owner_privileges: ['CREATE', 'USAGE'] }],
    });
    const snapshot = catalogSnapshot({
      roles: [liveRole('z'), liveRole('reader')],
      schemas: [{ name: 's', owner: 'y', owner_privileges: ['CREATE', 'USAGE'] }],
      grants: [g('z', 'schema', null, 's', ['USAGE']), g('reader', 'schema', null, 's', ['USAGE'])],
    });
    const changes = diff(desired, snapshot).changes;
    expect(changes.filter((c) => c.kind === 'revoke')).toEqual([
      {
        kind: 'revoke',
        role: 'reader',
        privileges: ['USAGE'],
        object_type: 'schema',
        name: 's',
        schema: null,
        grantor: null,
      },
    ]);
    expect(kinds(changes)).toContain('ensure_schema_owner_privileges');
  });
});

describe('grants', () => {
  const roles = [desiredRole('r')];
  const live = [liveRole('r')];

  it('grants a new key in full, the missing part of a shared key, and revokes the undeclared rest', () => {
    const desired = desiredState({
      roles,
      grants: [g('r', 'table', 's', 'a', ['SELECT']), g('r', 'table', 's', 'b', ['INSERT', 'SELECT'])],
    });
    const snapshot = catalogSnapshot({
      roles: live,
      grants: [
        g('r', 'table', 's', 'b', ['SELECT', 'UPDATE']),
        g('r', 'table', 's', 'c', ['DELETE'], 'boss'),
      ],
    });
    expect(diff(desired, snapshot).changes).toEqual([
      { kind: 'grant', role: 'r', privileges: ['SELECT'], object_type: 'table', name: 'a', schema: 's' },
      { kind: 'grant', role: 'r', privileges: ['INSERT'], object_type: 'table', name: 'b', schema: 's' },
      {
        kind: 'revoke',
        role: 'r',
        privileges: ['UPDATE'],
        object_type: 'table',
        name: 'b',
        schema: 's',
        grantor: null,
      },
      {
        kind: 'revoke',
        role: 'r',
        privileges: ['DELETE'],
        object_type: 'table',
        name: 'c',
        schema: 's',
        grantor: 'boss',
      },
    ]);
  });

  it('PUBLIC is assertion-only: unmentioned PUBLIC privileges are never revoked', () => {
    const desired = desiredState({ grants: [g('PUBLIC', 'schema', null, 's', ['USAGE'])] });
    const snapshot = catalogSnapshot({
      grants: [
        g('PUBLIC', 'schema', null, 's', ['CREATE', 'USAGE']),
        g('PUBLIC', 'function', 's', 'f()', ['EXECUTE']),
      ],
    });
    expect(diff(desired, snapshot).changes).toEqual([]);
  });

  it('PUBLIC (exact case) is the pseudo-role; `public` is an ordinary role whose undeclared grants are revoked', () => {
    const desired = desiredState({ roles: [desiredRole('public')] });
    const snapshot = catalogSnapshot({
      roles: [liveRole('public')],
      grants: [g('public', 'schema', null, 's', ['USAGE']), g('PUBLIC', 'schema', null, 's', ['USAGE'])],
    });
    expect(diff(desired, snapshot).changes).toEqual([
      {
        kind: 'revoke',
        role: 'public',
        privileges: ['USAGE'],
        object_type: 'schema',
        name: 's',
        schema: null,
        grantor: null,
      },
    ]);
  });

  it('revokes a PUBLIC absence, including built-in privileges the catalog reports', () => {
    const desired = desiredState({ grant_absences: [g('PUBLIC', 'function', 's', '*', ['EXECUTE'])] });
    const snapshot = catalogSnapshot({
      grants: [
        g('PUBLIC', 'function', 's', 'f(a integer)', ['EXECUTE']),
        g('PUBLIC', 'function', 's', 'g()', ['EXECUTE']),
      ],
    });
    expect(diff(desired, snapshot).changes).toEqual([
      {
        kind: 'revoke',
        role: 'PUBLIC',
        privileges: ['EXECUTE'],
        object_type: 'function',
        name: '*',
        schema: 's',
        grantor: null,
      },
    ]);
  });

  it('a `*` absence range-scans the (grantee, type, schema) prefix and emits one revoke; an empty range is converged', () => {
    const desired = desiredState({
      roles,
      grants: [g('r', 'table', 's', 'a', ['SELECT', 'UPDATE'])],
      grant_absences: [g('r', 'table', 's', '*', ['UPDATE']), g('r', 'sequence', 's', '*', ['USAGE'])],
    });
    const snapshot = catalogSnapshot({
      roles: live,
      grants: [g('r', 'table', 's', 'a', ['SELECT', 'UPDATE'])],
    });
    expect(diff(desired, snapshot).changes).toEqual([
      {
        kind: 'revoke',
        role: 'r',
        privileges: ['UPDATE'],
        object_type: 'table',
        name: '*',
        schema: 's',
        grantor: null,
      },
    ]);
  });

  it('merges convergence and absence revokes of one key into one revoke', () => {
    const desired = desiredState({ roles, grant_absences: [g('r', 'table', 's', 't', ['DELETE'])] });
    const snapshot = catalogSnapshot({
      roles: live,
      grants: [g('r', 'table', 's', 't', ['DELETE', 'SELECT'])],
    });
    expect(diff(desired, snapshot).changes).toEqual([
      {
        kind: 'revoke',
        role: 'r',
        privileges: ['DELETE', 'SELECT'],
        object_type: 'table',
        name: 't',
        schema: 's',
        grantor: null,
      },
    ]);
  });

  it('an empty wildcard scope is vacuously satisfied (no grant re-issued forever)', () => {
    const desired = desiredState({ roles, grants: [g('r', 'table', 'empty', '*', ['SELECT'])] });
    expect(diff(desired, catalogSnapshot({ roles: live })).changes).toEqual([]);
  });

  it('collapses live rows into `*` by the intersection over ALL objects and keeps the residue per object', () => {
    const inventory = ['a', 'b', 'c'].map((name) => ({
      kind: 'table' as const,
      schema: 's',
      name,
      owner: 'o',
    }));
    const desired = desiredState({ roles, grants: [g('r', 'table', 's', '*', ['SELECT'])] });
    const allHold = catalogSnapshot({
      roles: live,
      inventory,
      grants: [
        g('r', 'table', 's', 'a', ['SELECT', 'UPDATE']),
        g('r', 'table', 's', 'b', ['SELECT']),
        g('r', 'table', 's', 'c', ['SELECT']),
      ],
    });
    expect(diff(desired, allHold).changes).toEqual([
      {
        kind: 'revoke',
        role: 'r',
        privileges: ['UPDATE'],
        object_type: 'table',
        name: 'a',
        schema: 's',
        grantor: null,
      },
    ]);
    const oneMissing = catalogSnapshot({
      roles: live,
      inventory,
      grants: [g('r', 'table', 's', 'a', ['SELECT']), g('r', 'table', 's', 'b', ['SELECT'])],
    });
    expect(diff(desired, oneMissing).changes).toEqual([
      { kind: 'grant', role: 'r', privileges: ['SELECT'], object_type: 'table', name: '*', schema: 's' },
    ]);
  });

  it('objects the grantee owns satisfy its wildcard (owners hold every privilege; no grant re-issued forever)', () => {
    const desired = desiredState({ roles, grants: [g('r', 'table', 's', '*', ['SELECT'])] });
    const inventory = [
      { kind: 'table' as const, schema: 's', name: 'mine', owner: 'r' },
      { kind: 'table' as const, schema: 's', name: 'theirs', owner: 'o' },
    ];
    const converged = catalogSnapshot({
      roles: live,
      inventory,
      grants: [g('r', 'table', 's', 'theirs', ['SELECT'])],
    });
    expect(diff(desired, converged).changes).toEqual([]);
    const allMine = catalogSnapshot({ roles: live, inventory: [inventory[0]!] });
    expect(diff(desired, allMine).changes).toEqual([]);
    const missing = catalogSnapshot({ roles: live, inventory });
    expect(diff(desired, missing).changes).toEqual([
      { kind: 'grant', role: 'r', privileges: ['SELECT'], object_type: 'table', name: '*', schema: 's' },
    ]);
  });

  it('the shadow filter skips per-object revokes a present or absent wildcard covers', () => {
    const inventory = ['a', 'b'].map((name) => ({ kind: 'table' as const, schema: 's', name, owner: 'o' }));
    const desired = desiredState({
      roles,
      grants: [g('r', 'table', 's', '*', ['SELECT'])],
      grant_absences: [g('r', 'table', 's', '*', ['DELETE'])],
    });
    const snapshot = catalogSnapshot({
      roles: live,
      inventory,
      grants: [g('r', 'table', 's', 'a', ['DELETE', 'SELECT', 'TRIGGER'])],
    });
    expect(diff(desired, snapshot).changes).toEqual([
      { kind: 'grant', role: 'r', privileges: ['SELECT'], object_type: 'table', name: '*', schema: 's' },
      {
        kind: 'revoke',
        role: 'r',
        privileges: ['DELETE'],
        object_type: 'table',
        name: '*',
        schema: 's',
        grantor: null,
      },
      {
        kind: 'revoke',
        role: 'r',
        privileges: ['TRIGGER'],
        object_type: 'table',
        name: 'a',
        schema: 's',
        grantor: null,
      },
    ]);
  });

  it('privileges a named selector manages in a `*` scope stay per object, so the `*` revoke never strips them', () => {
    const inventory = ['a', 'b'].map((name) => ({ kind: 'table' as const, schema: 's', name, owner: 'o' }));
    const snapshot = catalogSnapshot({
      roles: live,
      inventory,
      grants: [
        g('r', 'table', 's', 'a', ['SELECT', 'UPDATE']),
        g('r', 'table', 's', 'b', ['SELECT', 'UPDATE']),
      ],
    });
    const disjoint = desiredState({
      roles,
      grants: [
        g('r', 'table', 's', '*', ['UPDATE']),
        g('r', 'table', 's', 'a', ['SELECT']),
        g('r', 'table', 's', 'b', ['SELECT']),
      ],
    });
    expect(diff(disjoint, snapshot).changes).toEqual([]);
    const agreeing = desiredState({
      roles,
      grants: [g('r', 'table', 's', '*', ['SELECT', 'UPDATE']), g('r', 'table', 's', 'a', ['SELECT'])],
    });
    expect(diff(agreeing, snapshot).changes).toEqual([]);
  });

  it('absence wildcards are never normalised: the range still sees per-object rows', () => {
    const inventory = ['a'].map((name) => ({ kind: 'table' as const, schema: 's', name, owner: 'o' }));
    const desired = desiredState({ roles, grant_absences: [g('r', 'table', 's', '*', ['SELECT'])] });
    const snapshot = catalogSnapshot({
      roles: live,
      inventory,
      grants: [g('r', 'table', 's', 'a', ['SELECT'])],
    });
    expect(diff(desired, snapshot).changes).toEqual([
      {
        kind: 'revoke',
        role: 'r',
        privileges: ['SELECT'],
        object_type: 'table',
        name: '*',
        schema: 's',
        grantor: null,
      },
    ]);
  });

  it('maps declared function signatures to catalog identities, so a held grant is not re-issued', () => {
    const desired = desiredState({ roles, grants: [g('r', 'function', 's', 'f(integer)', ['EXECUTE'])] });
    const snapshot = catalogSnapshot({
      roles: live,
      grants: [g('r', 'function', 's', 'f(p_id integer)', ['EXECUTE'])],
      function_signatures: [{ schema: 's', declared: 'f(integer)', identity: 'f(p_id integer)' }],
    });
    expect(diff(desired, snapshot)).toEqual({ changes: [], blockers: [] });
  });

  it('a declared function that does not exist blocks the plan', () => {
    const desired = desiredState({ roles, grants: [g('r', 'function', 's', 'nope(integer)', ['EXECUTE'])] });
    const snapshot = catalogSnapshot({
      roles: live,
      function_signatures: [{ schema: 's', declared: 'nope(integer)', identity: null }],
    });
    expect(diff(desired, snapshot)).toEqual({
      changes: [],
      blockers: ['function s.nope(integer) does not exist'],
    });
  });

  it('an unsatisfiable wildcard from the snapshot blocks the plan instead of churning', () => {
    const desired = desiredState({ roles, grants: [g('r', 'table', 's', '*', ['SELECT'])] });
    const snapshot = catalogSnapshot({
      roles: live,
      inventory: [{ kind: 'table', schema: 's', name: 't', owner: 'other' }],
      unsatisfiable_wildcards: [
        {
          grantee: 'r',
          object_type: 'table',
          schema: 's',
          privileges: ['SELECT'],
          executor: 'rolepolicy_executor',
          count: 1,
          examples: [{ name: 't', owner: 'other' }],
        },
      ],
    });
    expect(diff(desired, snapshot).blockers).toEqual([
      'wildcard grant of SELECT on table s.* to r cannot be satisfied by executor rolepolicy_executor: 1 objects not grantable (s.t owned by other)',
    ]);
  });

  it('preserve_undeclared_grants keeps undeclared grants but still applies ensure: absent', () => {
    const desired = desiredState({
      roles: [desiredRole('r', {}, { preserve_undeclared_grants: true })],
      grants: [g('r', 'table', 's', 'a', ['SELECT'])],
      grant_absences: [g('r', 'table', 's', 'c', ['DELETE'])],
    });
    const snapshot = catalogSnapshot({
      roles: live,
      grants: [
        g('r', 'table', 's', 'a', ['SELECT', 'UPDATE']),
        g('r', 'table', 's', 'b', ['SELECT']),
        g('r', 'table', 's', 'c', ['DELETE', 'INSERT']),
      ],
    });
    expect(diff(desired, snapshot).changes).toEqual([
      {
        kind: 'revoke',
        role: 'r',
        privileges: ['DELETE'],
        object_type: 'table',
        name: 'c',
        schema: 's',
        grantor: null,
      },
    ]);
  });

  it('preserve_undeclared_grants covers object grants only: default privileges and memberships stay exhaustive', () => {
    const desired = desiredState({
      roles: [desiredRole('r', {}, { preserve_undeclared_grants: true }), desiredRole('grp')],
    });
    const snapshot = catalogSnapshot({
      roles: [liveRole('r'), liveRole('grp')],
      default_privileges: [
        {
          owner: 'o',
          scope: { type: 'schema', schema: 's' },
          on_type: 'table',
          grantee: 'r',
          privileges: ['SELECT'],
        },
      ],
      memberships: [{ role: 'grp', member: 'r', inherit: true, admin: false }],
    });
    expect(kinds(diff(desired, snapshot).changes)).toEqual(['remove_member', 'revoke_default_privilege']);
  });
});

describe('schema owners and grants', () => {
  it('a declared schema grant to the current owner is satisfied by its owner privileges (no grant forever)', () => {
    const desired = desiredState({
      reconciliation_mode: 'additive',
      roles: [desiredRole('z'), desiredRole('y')],
      schemas: [{ name: 's', owner: 'z', owner_privileges: ['CREATE', 'USAGE'] }],
      grants: [g('y', 'schema', null, 's', ['USAGE'])],
    });
    const snapshot = catalogSnapshot({
      roles: [liveRole('z'), liveRole('y')],
      schemas: [{ name: 's', owner: 'y', owner_privileges: ['CREATE', 'USAGE'] }],
    });
    expect(computePlan(planInput(desired, snapshot)).changes).toEqual([]);
  });

  it('a per-object grant to the object owner (known from the inventory) is satisfied (no grant forever)', () => {
    const desired = desiredState({
      roles: [desiredRole('o'), desiredRole('r')],
      grants: [
        g('o', 'table', 's', '*', ['SELECT']),
        g('o', 'table', 's', 'a', ['INSERT']),
        g('r', 'table', 's', 'a', ['INSERT']),
      ],
    });
    const snapshot = catalogSnapshot({
      roles: [liveRole('o'), liveRole('r')],
      inventory: [{ kind: 'table', schema: 's', name: 'a', owner: 'o' }],
    });
    expect(diff(desired, snapshot).changes).toEqual([
      { kind: 'grant', role: 'r', privileges: ['INSERT'], object_type: 'table', name: 'a', schema: 's' },
    ]);
  });
});

describe('default privileges', () => {
  const key = { owner: 'o', scope: { type: 'schema', schema: 's' } as const, on_type: 'table' as const };

  it('sets missing, revokes undeclared, and exempts PUBLIC from convergence revokes', () => {
    const desired = desiredState({
      roles: [desiredRole('r')],
      default_privileges: [{ ...key, grantee: 'r', privileges: ['SELECT'] }],
    });
    const snapshot = catalogSnapshot({
      roles: [liveRole('r')],
      default_privileges: [
        { ...key, grantee: 'r', privileges: ['INSERT'] },
        { ...key, grantee: 'PUBLIC', privileges: ['SELECT'] },
      ],
    });
    expect(diff(desired, snapshot).changes).toEqual([
      { kind: 'set_default_privilege', ...key, grantee: 'r', privileges: ['SELECT'] },
      { kind: 'revoke_default_privilege', ...key, grantee: 'r', privileges: ['INSERT'] },
    ]);
  });

  it('an absence of a global PUBLIC default for an owner created in this plan revokes the built-in', () => {
    const desired = desiredState({
      roles: [desiredRole('o')],
      default_privilege_absences: [
        {
          owner: 'o',
          scope: { type: 'global' },
          on_type: 'function',
          grantee: 'PUBLIC',
          privileges: ['EXECUTE'],
        },
      ],
    });
    expect(diff(desired, catalogSnapshot()).changes).toEqual([
      { kind: 'create_role', name: 'o', state: expect.any(Object) },
      {
        kind: 'revoke_default_privilege',
        owner: 'o',
        scope: { type: 'global' },
        on_type: 'function',
        grantee: 'PUBLIC',
        privileges: ['EXECUTE'],
      },
    ]);
  });
});

describe('memberships', () => {
  const roles = [desiredRole('grp'), desiredRole('m')];
  const live = [liveRole('grp'), liveRole('m')];

  it('adds missing edges, replaces an edge whose flags differ, and removes undeclared members', () => {
    const desired = desiredState({
      roles: [...roles, desiredRole('n')],
      memberships: [
        { role: 'grp', member: 'm', inherit: false, admin: false },
        { role: 'grp', member: 'n', inherit: true, admin: false },
      ],
    });
    // PostgreSQL 16: the edge carries its own inherit flag (before 16 it is the member's rolinherit).
    const snapshot = catalogSnapshot({
      server_version_num: 160000,
      roles: [...live, liveRole('n'), liveRole('x')],
      memberships: [
        { role: 'grp', member: 'm', inherit: true, admin: false, grantor: 'g1' },
        { role: 'grp', member: 'x', inherit: true, admin: false },
      ],
    });
    expect(diff(desired, snapshot).changes).toEqual([
      { kind: 'remove_member', role: 'grp', member: 'm', grantor: 'g1' },
      { kind: 'remove_member', role: 'grp', member: 'x', grantor: null },
      { kind: 'add_member', role: 'grp', member: 'm', inherit: false, admin: false },
      { kind: 'add_member', role: 'grp', member: 'n', inherit: true, admin: false },
    ]);
  });

  it('PG16: removes an undeclared edge once per grantor row, each with its GRANTED BY', () => {
    const snapshot = catalogSnapshot({
      server_version_num: 160004,
      roles: live,
      memberships: [
        { role: 'grp', member: 'm', inherit: true, admin: false, grantor: 'b_admin' },
        { role: 'grp', member: 'm', inherit: true, admin: false, grantor: 'a_admin' },
      ],
    });
    expect(diff(desiredState({ roles }), snapshot).changes).toEqual([
      { kind: 'remove_member', role: 'grp', member: 'm', grantor: 'a_admin' },
      { kind: 'remove_member', role: 'grp', member: 'm', grantor: 'b_admin' },
    ]);
  });

  it('ignores the PG16 CREATEROLE self-grant edge from a created role to the executor', () => {
    const desired = desiredState({ roles });
    const snapshot = catalogSnapshot({
      server_version_num: 160004,
      executor: { role: 'exec', superuser: false, createrole: true, member_of: [] },
      roles: live,
      memberships: [{ role: 'grp', member: 'exec', inherit: false, admin: true, grantor: null }],
    });
    expect(diff(desired, snapshot).changes).toEqual([]);
  });
});

describe('retirements', () => {
  it('terminates sessions, reassigns, drops owned, then drops the role', () => {
    const desired = desiredState({
      roles: [desiredRole('heir')],
      retirements: [{ role: 'old', reassign_owned_to: 'heir', drop_owned: true, terminate_sessions: true }],
    });
    const snapshot = catalogSnapshot({ roles: [liveRole('heir'), liveRole('old')] });
    expect(diff(desired, snapshot).changes).toEqual([
      { kind: 'terminate_sessions', role: 'old' },
      { kind: 'reassign_owned', from_role: 'old', to_role: 'heir' },
      { kind: 'drop_owned', role: 'old' },
      { kind: 'drop_role', name: 'old' },
    ]);
  });

  it('plans nothing for a retired role that does not exist', () => {
    const desired = desiredState({
      retirements: [{ role: 'old', reassign_owned_to: null, drop_owned: true, terminate_sessions: true }],
    });
    expect(diff(desired, catalogSnapshot()).changes).toEqual([]);
  });
});
