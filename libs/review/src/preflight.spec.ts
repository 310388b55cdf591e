// Preflight and findings that need PostgreSQL 16 semantics or an offline review, on built snapshots:
// grantor reachability, active sessions, an intended executor other than the inspector, a superuser executor.
import { computePlan, deriveManagedScope, type CatalogSnapshot, type DesiredState } from '@rolepolicy/policy';

import {
  catalogSnapshot,
  desiredRole,
  desiredState,
  liveRole,
} from '../../policy/src/diff/test-support/builders.js';
import { buildReviewArtifact, validateReviewArtifact, type ReviewArtifact } from './index.js';
import type { ReviewFacts } from './review-facts.js';

const NO_FACTS: ReviewFacts = { executor_memberships: [], drop_roles: [], predefined_roles: [] };

function review(
  desired: DesiredState,
  snapshot: CatalogSnapshot,
  facts: ReviewFacts | null,
  intended?: { role: string; superuser: boolean | null },
): ReviewArtifact {
  const plan = computePlan({
    desired,
    snapshot,
    mode: desired.reconciliation_mode,
    passwordSources: {},
    appliedPasswordSourceVersions: {},
    allowSchemaOwnerTransfers: true,
  });
  const artifact = buildReviewArtifact({
    toolVersion: 'test',
    capturedAt: '2026-11-25T12:00:00Z',
    contentDigest: `sha256:${'a'.repeat(64)}`,
    targetLabel: 'unit',
    document: 'policy.yaml',
    mode: desired.reconciliation_mode,
    desired,
    scope: deriveManagedScope(desired),
    snapshot,
    plan,
    facts,
    ...(intended ? { intendedExecutor: intended } : {}),
  });
  expect(validateReviewArtifact(artifact)).toMatchObject({ ok: true });
  return artifact;
}

const exec = { role: 'exec', superuser: false, createrole: true, member_of: [] };
const check = (a: ReviewArtifact, name: string) => a.preflight.find((x) => x.check === name)!;

describe('grantor_reachability (PostgreSQL 16 grantor rows)', () => {
  const desired = desiredState({ roles: [desiredRole('grp'), desiredRole('m')] });
  const snapshot = catalogSnapshot({
    server_version_num: 160004,
    executor: exec,
    roles: [liveRole('grp'), liveRole('m')],
    memberships: [{ role: 'grp', member: 'm', inherit: true, admin: false, grantor: 'alice' }],
    existing_roles: ['alice', 'grp', 'm'],
  });

  it('a revoke of a membership granted by a role the executor cannot act as is an issue', () => {
    const artifact = review(desired, snapshot, NO_FACTS);
    expect(artifact.recorded.changes.map((c) => c.change)).toEqual([
      { kind: 'remove_member', role: 'grp', member: 'm', grantor: 'alice' },
    ]);
    expect(check(artifact, 'executor_authority')).toMatchObject({
      status: 'failed',
      issues: [{ code: 'grantor_unreachable', role: 'alice' }],
      coverage: { kind: 'complete', checks_performed: expect.arrayContaining(['grantor_reachability']) },
    });
  });

  it('passes when the executor is a member of the grantor', () => {
    const facts = {
      ...NO_FACTS,
      executor_memberships: [{ role: 'alice', member: 'exec', inherit: true, admin: false, grantor: null }],
    };
    expect(check(review(desired, snapshot, facts), 'executor_authority').status).toBe('passed');
  });
});

describe('role_drop_safety neutralised by retirement steps', () => {
  const snapshot = catalogSnapshot({ roles: [liveRole('old', { login: true })] });
  const facts: ReviewFacts = {
    ...NO_FACTS,
    drop_roles: [
      {
        role: 'old',
        owned_current: 0,
        owned_shared: 0,
        owned_other: 2,
        acl_current: 0,
        acl_other: 0,
        sessions: 3,
        examples: [],
        member_of: [],
        members: ['x'],
      },
    ],
  };
  it('reports sessions without terminate_sessions, other-database ownership always, and remaining members', () => {
    const retire = (terminate: boolean) =>
      desiredState({
        retirements: [
          { role: 'old', reassign_owned_to: null, drop_owned: true, terminate_sessions: terminate },
        ],
      });
    const codes = (a: ReviewArtifact) => check(a, 'role_drop_safety').issues.map((i) => i.code);
    expect(codes(review(retire(false), snapshot, facts))).toEqual([
      'active_sessions',
      'has_members',
      'owns_objects_in_other_databases',
    ]);
    expect(codes(review(retire(true), snapshot, facts))).toEqual([
      'has_members',
      'owns_objects_in_other_databases',
    ]);
  });
});

describe('identities', () => {
  const desired = desiredState({
    roles: [desiredRole('o')],
    default_privileges: [
      { owner: 'o', scope: { type: 'global' }, on_type: 'table', grantee: 'o2', privileges: ['SELECT'] },
    ],
  });
  const snapshot = catalogSnapshot({ executor: exec, roles: [liveRole('o')], existing_roles: ['o', 'o2'] });

  it('an intended executor other than the inspecting role makes authority unknown and asks for the database', () => {
    const artifact = review(desired, snapshot, NO_FACTS, { role: 'deployer', superuser: false });
    expect(artifact.context).toMatchObject({
      inspector: { role: 'exec', superuser: false },
      intended_executor: { role: 'deployer', superuser: false },
      authority_graph_complete: false,
    });
    expect(check(artifact, 'executor_authority')).toMatchObject({
      status: 'unknown',
      coverage: { kind: 'targeted', unchecked_change_indices: [0] },
    });
    expect(artifact.recorded.findings.map((f) => f.kind)).toEqual(['required_role_reachability_unknown']);
  });

  it('offline review (no facts) records database_preflight_required for the changes it could not prove', () => {
    const artifact = review(desired, snapshot, null);
    const finding = artifact.recorded.findings.find((f) => f.kind === 'database_preflight_required')!;
    expect(finding).toMatchObject({ severity: 'warning', change_indices: [0] });
  });

  it('a superuser executor passes executor_authority completely', () => {
    const su = catalogSnapshot({ roles: [liveRole('o')], existing_roles: ['o', 'o2'] });
    const artifact = review(desired, su, NO_FACTS);
    expect(check(artifact, 'executor_authority')).toMatchObject({
      status: 'passed',
      issue_count: 0,
      coverage: { kind: 'complete', checked_change_indices: [0], unchecked_change_indices: [] },
    });
    expect(artifact.recorded.findings).toEqual([]);
  });
});
