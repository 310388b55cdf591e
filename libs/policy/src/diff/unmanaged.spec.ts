// Table test: the unmanaged-role matrix (role kind x change kind x declared x exclusive x member is pg_*),
// plus end-to-end plans for the external / predefined role rules of engine notes 3.5.

import type { Change } from '../model/change.js';
import { computePlan } from '../plan/compute-plan.js';
import {
  catalogSnapshot,
  desiredRole,
  desiredState,
  externalRole,
  liveRole,
  planInput,
} from './test-support/builders.js';
import { filterUnmanaged } from './unmanaged.js';

type RoleKind = 'managed' | 'external' | 'predefined';
const ROLE: Record<RoleKind, string> = {
  managed: 'app_group',
  external: 'rds_iam',
  predefined: 'pg_monitor',
};
const desiredRoles = [desiredRole('app_group'), externalRole('rds_iam')];

/** Role-level changes an unmanaged role never receives, whatever its memberships. */
const ROLE_LEVEL: readonly ((name: string) => Change)[] = [
  (name) => ({ kind: 'create_role', name, state: createState() }),
  (name) => ({ kind: 'alter_role', name, attributes: [{ kind: 'login', value: true }] }),
  (name) => ({ kind: 'set_comment', name, comment: null }),
  (name) => ({ kind: 'set_password', name, password_source: 's:k:1' }),
  (name) => ({ kind: 'drop_role', name }),
  (role) => ({ kind: 'terminate_sessions', role }),
  (role) => ({ kind: 'reassign_owned', from_role: role, to_role: 'heir' }),
  (role) => ({ kind: 'drop_owned', role }),
];

function createState() {
  return {
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
  };
}

describe('unmanaged-role matrix: role-level changes', () => {
  for (const kind of ['managed', 'external', 'predefined'] as const) {
    for (const make of ROLE_LEVEL) {
      const change = make(ROLE[kind]);
      const kept = kind === 'managed';
      it(`${change.kind} on a ${kind} role is ${kept ? 'kept' : 'dropped'}`, () => {
        const out = filterUnmanaged([change], desiredState({ roles: desiredRoles }));
        expect(out).toEqual(kept ? [change] : []);
      });
    }
  }
});

/** Privilege changes for an unmanaged grantee or owner: they converge like any other role's. */
const PRIVILEGE_LEVEL: readonly ((name: string) => Change)[] = [
  (role) => ({ kind: 'grant', role, privileges: ['USAGE'], object_type: 'schema', name: 's', schema: null }),
  (role) => ({
    kind: 'revoke',
    role,
    privileges: ['USAGE'],
    object_type: 'schema',
    name: 's',
    schema: null,
    grantor: null,
  }),
  (grantee) => ({
    kind: 'set_default_privilege',
    owner: 'o',
    scope: { type: 'global' },
    on_type: 'table',
    grantee,
    privileges: ['SELECT'],
  }),
  (grantee) => ({
    kind: 'revoke_default_privilege',
    owner: 'o',
    scope: { type: 'global' },
    on_type: 'table',
    grantee,
    privileges: ['SELECT'],
  }),
  (owner) => ({ kind: 'alter_schema_owner', name: 's', owner }),
  (owner) => ({ kind: 'create_schema', name: 's', owner }),
  (owner) => ({ kind: 'ensure_schema_owner_privileges', name: 's', owner, privileges: ['CREATE'] }),
];

describe('unmanaged-role matrix: privilege changes', () => {
  for (const kind of ['managed', 'external', 'predefined'] as const) {
    for (const make of PRIVILEGE_LEVEL) {
      const change = make(ROLE[kind]);
      it(`${change.kind} naming a ${kind} role is kept`, () => {
        expect(filterUnmanaged([change], desiredState({ roles: desiredRoles }))).toEqual([change]);
      });
    }
  }
});

/**
 * Membership rows: [role kind, change kind, declared, exclusive, member is pg_*, kept].
 * add into unmanaged: only declared. remove from unmanaged: declared, or exclusive and member not pg_*.
 */
const MEMBERSHIP_MATRIX: readonly (readonly [
  RoleKind,
  'add_member' | 'remove_member',
  boolean,
  boolean,
  boolean,
  boolean,
])[] = [
  ...(['managed'] as const).flatMap((k) =>
    (['add_member', 'remove_member'] as const).flatMap((c) =>
      [true, false].flatMap((d) =>
        [true, false].flatMap((e) => [true, false].map((p) => [k, c, d, e, p, true] as const)),
      ),
    ),
  ),
  ...(['external', 'predefined'] as const).flatMap((k) => [
    [k, 'add_member', true, true, true, true] as const,
    [k, 'add_member', true, true, false, true] as const,
    [k, 'add_member', true, false, true, true] as const,
    [k, 'add_member', true, false, false, true] as const,
    [k, 'add_member', false, true, true, false] as const,
    [k, 'add_member', false, true, false, false] as const,
    [k, 'add_member', false, false, true, false] as const,
    [k, 'add_member', false, false, false, false] as const,
    [k, 'remove_member', true, true, true, true] as const,
    [k, 'remove_member', true, true, false, true] as const,
    [k, 'remove_member', true, false, true, true] as const,
    [k, 'remove_member', true, false, false, true] as const,
    [k, 'remove_member', false, true, true, false] as const,
    [k, 'remove_member', false, true, false, true] as const,
    [k, 'remove_member', false, false, true, false] as const,
    [k, 'remove_member', false, false, false, false] as const,
  ]),
];

describe('unmanaged-role matrix: memberships', () => {
  for (const [kind, changeKind, declared, exclusive, memberPg, kept] of MEMBERSHIP_MATRIX) {
    const role = ROLE[kind];
    const member = memberPg ? 'pg_read_all_stats' : 'alice';
    it(`${changeKind} ${role} <- ${member} (declared=${declared}, exclusive=${exclusive}) is ${kept ? 'kept' : 'dropped'}`, () => {
      const change: Change =
        changeKind === 'add_member'
          ? { kind: 'add_member', role, member, inherit: true, admin: false }
          : { kind: 'remove_member', role, member, grantor: null };
      const desired = desiredState({
        roles: desiredRoles,
        memberships: declared ? [{ role, member, inherit: true, admin: false }] : [],
        exclusive_membership_roles: exclusive ? [role] : [],
      });
      expect(filterUnmanaged([change], desired)).toEqual(kept ? [change] : []);
    });
  }
});

describe('external and predefined roles end to end', () => {
  it('never creates, alters or comments an external role, but converges its grants and declared edges', () => {
    const desired = desiredState({
      roles: [externalRole('iam_user'), desiredRole('app')],
      grants: [
        { grantee: 'iam_user', object_type: 'schema', schema: null, name: 's', privileges: ['USAGE'] },
      ],
      memberships: [{ role: 'app', member: 'iam_user', inherit: true, admin: false }],
    });
    const snapshot = catalogSnapshot({
      roles: [liveRole('iam_user', { login: true, comment: 'provider' }), liveRole('app')],
      grants: [
        { grantee: 'iam_user', object_type: 'schema', schema: null, name: 'x', privileges: ['USAGE'] },
      ],
    });
    expect(computePlan(planInput(desired, snapshot)).changes.map((c) => c.kind)).toEqual([
      'grant',
      'add_member',
      'revoke',
    ]);
  });

  it('keeps undeclared provider-granted members of pg_* roles unless the stanza is exclusive', () => {
    const base = {
      roles: [desiredRole('app')],
      memberships: [{ role: 'pg_monitor', member: 'app', inherit: true, admin: false }],
    };
    const snapshot = catalogSnapshot({
      roles: [liveRole('app')],
      memberships: [
        { role: 'pg_monitor', member: 'app', inherit: true, admin: false },
        { role: 'pg_monitor', member: 'provider_agent', inherit: true, admin: false },
      ],
    });
    expect(computePlan(planInput(desiredState(base), snapshot)).changes).toEqual([]);
    const exclusive = desiredState({ ...base, exclusive_membership_roles: ['pg_monitor'] });
    expect(computePlan(planInput(exclusive, snapshot)).changes).toEqual([
      { kind: 'remove_member', role: 'pg_monitor', member: 'provider_agent', grantor: null },
    ]);
  });

  it('never revokes built-in pg_* -> pg_* edges, even under exclusive', () => {
    const desired = desiredState({ exclusive_membership_roles: ['pg_read_all_stats'] });
    const snapshot = catalogSnapshot({
      memberships: [{ role: 'pg_read_all_stats', member: 'pg_monitor', inherit: true, admin: false }],
    });
    expect(computePlan(planInput(desired, snapshot)).changes).toEqual([]);
  });
});
