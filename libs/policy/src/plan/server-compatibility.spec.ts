// server_compatibility blockers: per-membership inherit before PostgreSQL 16, foreign membership grantors
// a non-superuser executor cannot revoke on 16+ (docs/postgres-versions.md).

import {
  catalogSnapshot,
  desiredRole,
  desiredState,
  liveRole,
  planInput,
} from '../diff/test-support/builders.js';
import { computePlan } from './compute-plan.js';

const edge = (role: string, member: string, inherit: boolean) => ({ role, member, inherit, admin: false });
const exec = { role: 'exec', superuser: false, createrole: true, member_of: ['helper'] };

describe('per-membership inherit before PostgreSQL 16', () => {
  const desired = desiredState({
    roles: [desiredRole('group'), desiredRole('app')],
    memberships: [edge('group', 'app', false)],
  });

  it('an edge whose inherit differs from the member role inherit blocks the plan on 15 and names the fix', () => {
    const plan = computePlan(planInput(desired, catalogSnapshot({ server_version_num: 150010 })));
    expect(plan.blockers).toEqual([
      'membership group -> app declares inherit: false, but PostgreSQL 15 has no per-membership inherit ' +
        'option (PostgreSQL 16+): the role-level inherit of app (true) applies to all its memberships; ' +
        'declare inherit: true on this membership or set inherit: false on role app',
    ]);
  });

  it('an edge that agrees with the member role inherit is fine, and 16+ stores the option per edge', () => {
    const plainOfNoInherit = desiredState({
      roles: [desiredRole('group'), desiredRole('app', { inherit: false })],
      memberships: [edge('group', 'app', true)],
    });
    expect(computePlan(planInput(plainOfNoInherit, catalogSnapshot())).blockers).toEqual([]);
    const agreeing = desiredState({
      roles: [desiredRole('group'), desiredRole('app', { inherit: false })],
      memberships: [edge('group', 'app', false)],
    });
    expect(
      computePlan(planInput(agreeing, catalogSnapshot({ server_version_num: 140000 }))).blockers,
    ).toEqual([]);
    expect(computePlan(planInput(desired, catalogSnapshot({ server_version_num: 160004 }))).blockers).toEqual(
      [],
    );
  });

  it('an external member is judged by its live inherit; an unknown one is not judged', () => {
    const external = desiredState({
      roles: [desiredRole('group'), desiredRole('ext', {}, { external: true })],
      memberships: [edge('group', 'ext', false), edge('group', 'unknown', false)],
    });
    const snapshot = catalogSnapshot({ roles: [liveRole('ext', { inherit: false })] });
    expect(computePlan(planInput(external, snapshot)).blockers).toEqual([]);
  });
});

describe('membership grantors on PostgreSQL 16+', () => {
  const desired = desiredState({ roles: [desiredRole('group'), desiredRole('app')] });
  const live = (grantor: string | null, executor = exec) =>
    catalogSnapshot({
      server_version_num: 180004,
      roles: [liveRole('group'), liveRole('app')],
      memberships: [{ ...edge('group', 'app', true), grantor }],
      executor,
    });

  it('a row granted by the bootstrap superuser cannot be revoked by a CREATEROLE executor', () => {
    expect(computePlan(planInput(desired, live(null))).blockers).toEqual([
      'membership group -> app was granted by the bootstrap superuser; on PostgreSQL 16+ only a role with ' +
        'the privileges of the bootstrap superuser can revoke it, and executor exec has not: revoke it as a superuser',
    ]);
  });

  it('rows granted by the executor or a role it is a member of are revoked with GRANTED BY', () => {
    for (const grantor of ['exec', 'helper']) {
      const plan = computePlan(planInput(desired, live(grantor)));
      expect(plan.blockers).toEqual([]);
      expect(plan.changes).toEqual([{ kind: 'remove_member', role: 'group', member: 'app', grantor }]);
    }
  });

  it('a superuser executor revokes any row; before 16 the grantor does not matter', () => {
    const superuser = { role: 'postgres', superuser: true, createrole: true, member_of: [] };
    expect(computePlan(planInput(desired, live(null, superuser))).blockers).toEqual([]);
    const pg15 = catalogSnapshot({
      roles: [liveRole('group'), liveRole('app')],
      memberships: [{ ...edge('group', 'app', true), grantor: null }],
      executor: exec,
    });
    expect(computePlan(planInput(desired, pg15)).blockers).toEqual([]);
  });
});

describe('predefined roles newer than the server', () => {
  const desired = desiredState({
    roles: [desiredRole('ops'), desiredRole('pg_maintain', {}, { external: true })],
    memberships: [{ role: 'pg_maintain', member: 'ops', inherit: true, admin: false }],
  });

  it('a membership in pg_maintain on PostgreSQL 16 is refused, naming the major that added it', () => {
    const snapshot = catalogSnapshot({ server_version_num: 160004, existing_roles: ['ops'] });
    expect(computePlan(planInput(desired, snapshot)).blockers).toEqual([
      'predefined role pg_maintain does not exist on PostgreSQL 16: it was added in PostgreSQL 17',
    ]);
  });

  it('on PostgreSQL 17 the role exists and nothing is refused', () => {
    const snapshot = catalogSnapshot({ server_version_num: 170006, existing_roles: ['ops', 'pg_maintain'] });
    expect(computePlan(planInput(desired, snapshot)).blockers).toEqual([]);
  });
});
