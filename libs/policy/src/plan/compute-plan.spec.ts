// computePlan: passwords after the mode filter, the OwnerTransferBlocked input, plan_warnings,
// the additive absence flag, change_summary counters and phase runs (engine notes 3.3, 3.4, 3.8, 3.9).

import type { DesiredState } from '../model/desired.js';
import { PHASES } from '../model/vocabulary.js';
import {
  catalogSnapshot,
  desiredRole,
  desiredState,
  liveRole,
  planInput,
} from '../diff/test-support/builders.js';
import { computePlan, isConverged } from './compute-plan.js';

const secret = { kind: 'secret_ref', secretName: 'pw', secretKey: 'app' } as const;
const generated = { kind: 'generate', secretName: 'p-gen-app', secretKey: 'password', length: 32 } as const;

describe('passwords', () => {
  const withPassword = (password: typeof secret | typeof generated): DesiredState =>
    desiredState({ roles: [desiredRole('app', { login: true }, { password })] });

  it('sets the password of a role created in this plan right after its CREATE ROLE', () => {
    const plan = computePlan(
      planInput(withPassword(secret), catalogSnapshot(), {
        passwordSources: { app: 'pw:app:7' },
        appliedPasswordSourceVersions: { app: 'pw:app:7' },
      }),
    );
    expect(plan.changes.map((c) => c.kind)).toEqual(['create_role', 'set_password']);
    expect(plan.changes[1]).toEqual({ kind: 'set_password', name: 'app', password_source: 'pw:app:7' });
    expect(plan.phases).toEqual([{ phase: 'create', change_indices: [0, 1] }]);
  });

  it('sets it again when the applied source version differs, and not when it matches', () => {
    const snapshot = catalogSnapshot({ roles: [liveRole('app', { login: true })] });
    const rotated = computePlan(
      planInput(withPassword(secret), snapshot, {
        passwordSources: { app: 'pw:app:8' },
        appliedPasswordSourceVersions: { app: 'pw:app:7' },
      }),
    );
    expect(rotated.changes).toEqual([{ kind: 'set_password', name: 'app', password_source: 'pw:app:8' }]);
    expect(rotated.phases).toEqual([{ phase: 'alter', change_indices: [0] }]);
    const same = computePlan(
      planInput(withPassword(secret), snapshot, {
        passwordSources: { app: 'pw:app:8' },
        appliedPasswordSourceVersions: { app: 'pw:app:8' },
      }),
    );
    expect(isConverged(same)).toBe(true);
  });

  it('sets a generated password that is not materialised yet (source ends in :missing)', () => {
    const snapshot = catalogSnapshot({ roles: [liveRole('app', { login: true })] });
    const plan = computePlan(
      planInput(withPassword(generated), snapshot, {
        passwordSources: { app: 'p-gen-app:password:missing' },
        appliedPasswordSourceVersions: { app: 'p-gen-app:password:missing' },
      }),
    );
    expect(plan.summary.passwords_set).toBe(1);
  });

  it('additive mode still sets passwords (selection runs after the mode filter)', () => {
    const desired = { ...withPassword(secret), reconciliation_mode: 'additive' as const };
    const snapshot = catalogSnapshot({ roles: [liveRole('app', { login: false })] });
    const plan = computePlan(planInput(desired, snapshot, { passwordSources: { app: 'pw:app:2' } }));
    expect(plan.changes).toEqual([{ kind: 'set_password', name: 'app', password_source: 'pw:app:2' }]);
  });

  it('fails closed when a password-managed role has no source version', () => {
    const plan = computePlan(planInput(withPassword(secret), catalogSnapshot()));
    expect(plan.blockers).toEqual(['password source version for role app is unknown']);
    expect(plan.changes.some((c) => c.kind === 'set_password')).toBe(false);
  });

  it('never puts a password or verifier into a change, only the source version', () => {
    const plan = computePlan(
      planInput(withPassword(secret), catalogSnapshot(), { passwordSources: { app: 'pw:app:1' } }),
    );
    expect(JSON.stringify(plan)).not.toMatch(/SCRAM|verifier/i);
  });
});

describe('schema owner transfers', () => {
  const desired = (mode: DesiredState['reconciliation_mode']): DesiredState =>
    desiredState({
      reconciliation_mode: mode,
      roles: [desiredRole('z')],
      schemas: [{ name: 's', owner: 'z', owner_privileges: ['CREATE', 'USAGE'] }],
      default_privileges: [
        {
          owner: 'z',
          scope: { type: 'schema', schema: 's' },
          on_type: 'table',
          grantee: 'z2',
          privileges: ['SELECT'],
        },
      ],
    });
  const snapshot = catalogSnapshot({
    roles: [liveRole('z')],
    schemas: [{ name: 's', owner: 'y', owner_privileges: ['CREATE', 'USAGE'] }],
  });

  it('adopt with a transfer and allow_schema_owner_transfers=false is OwnerTransferBlocked, with a plan warning', () => {
    const plan = computePlan(planInput(desired('adopt'), snapshot));
    expect(plan.ownerTransferBlocked).toBe(true);
    expect(plan.warnings).toEqual(['adopt mode transfers ownership of schema s from y to z']);
    expect(
      computePlan(planInput(desired('adopt'), snapshot, { allowSchemaOwnerTransfers: true }))
        .ownerTransferBlocked,
    ).toBe(false);
  });

  it('authoritative transfers are never blocked; additive drops the transfer and its follow-ups', () => {
    expect(computePlan(planInput(desired('authoritative'), snapshot)).ownerTransferBlocked).toBe(false);
    const additive = computePlan(planInput(desired('additive'), snapshot));
    expect(additive.ownerTransferBlocked).toBe(false);
    expect(additive.changes).toEqual([]);
  });
});

describe('plan flags and counters', () => {
  it('passes expansion warnings (undeclared default_owner) into plan_warnings', () => {
    const plan = computePlan(
      planInput(desiredState({ warnings: ['default_owner app_owner is not declared'] }), catalogSnapshot()),
    );
    expect(plan.warnings).toEqual(['default_owner app_owner is not declared']);
  });

  it('flags additive mode ignoring absence assertions and exclusive stanzas', () => {
    const absence = desiredState({
      reconciliation_mode: 'additive',
      grant_absences: [
        { grantee: 'PUBLIC', object_type: 'schema', schema: null, name: 'public', privileges: ['CREATE'] },
      ],
    });
    expect(computePlan(planInput(absence, catalogSnapshot())).additiveIgnoredAbsence).toBe(true);
    const exclusive = desiredState({
      reconciliation_mode: 'additive',
      exclusive_membership_roles: ['pg_monitor'],
    });
    expect(computePlan(planInput(exclusive, catalogSnapshot())).additiveIgnoredAbsence).toBe(true);
    expect(
      computePlan(planInput({ ...absence, reconciliation_mode: 'authoritative' }, catalogSnapshot()))
        .additiveIgnoredAbsence,
    ).toBe(false);
  });

  it('counts one per change; set_comment is a role alter; reassign_owned and drop_owned are uncounted', () => {
    const desired = desiredState({
      roles: [desiredRole('a', { comment: 'x' }), desiredRole('b')],
      schemas: [{ name: 's', owner: 'b', owner_privileges: ['CREATE', 'USAGE'] }],
      grants: [{ grantee: 'a', object_type: 'schema', schema: null, name: 's', privileges: ['USAGE'] }],
      retirements: [{ role: 'old', reassign_owned_to: 'b', drop_owned: true, terminate_sessions: true }],
    });
    const snapshot = catalogSnapshot({ roles: [liveRole('a', { login: true }), liveRole('old')] });
    const plan = computePlan(planInput(desired, snapshot));
    expect(plan.summary).toEqual({
      default_privileges_revoked: 0,
      default_privileges_set: 0,
      grants_added: 1,
      grants_revoked: 0,
      members_added: 0,
      members_removed: 0,
      passwords_set: 0,
      roles_altered: 2,
      roles_created: 1,
      roles_dropped: 1,
      schema_owners_altered: 0,
      schemas_created: 1,
      sessions_terminated: 1,
      total: 7,
    });
    expect(plan.changes).toHaveLength(9);
  });

  it('each phase is one contiguous run in spec order, and phases[] indexes every change once', () => {
    const desired = desiredState({
      roles: [desiredRole('a'), desiredRole('b'), desiredRole('g')],
      schemas: [{ name: 's', owner: 'a', owner_privileges: ['CREATE', 'USAGE'] }],
      grants: [{ grantee: 'b', object_type: 'schema', schema: null, name: 's', privileges: ['USAGE'] }],
      default_privileges: [
        {
          owner: 'a',
          scope: { type: 'schema', schema: 's' },
          on_type: 'table',
          grantee: 'b',
          privileges: ['SELECT'],
        },
      ],
      memberships: [{ role: 'g', member: 'a', inherit: false, admin: false }],
      retirements: [{ role: 'old', reassign_owned_to: null, drop_owned: false, terminate_sessions: false }],
    });
    const snapshot = catalogSnapshot({
      server_version_num: 160000,
      roles: [liveRole('a', { login: true }), liveRole('g'), liveRole('old')],
      grants: [{ grantee: 'g', object_type: 'schema', schema: null, name: 's', privileges: ['USAGE'] }],
      default_privileges: [
        {
          owner: 'a',
          scope: { type: 'schema', schema: 's' },
          on_type: 'table',
          grantee: 'g',
          privileges: ['SELECT'],
        },
      ],
      memberships: [{ role: 'g', member: 'a', inherit: true, admin: false }],
    });
    const plan = computePlan(planInput(desired, snapshot));
    expect(plan.phases.map((p) => p.phase)).toEqual([...PHASES]);
    expect(plan.phases.flatMap((p) => p.change_indices)).toEqual(plan.changes.map((_, i) => i));
  });
});
