// Each finding kind and preflight check triggered by a real scenario on the local PostgreSQL 15: roles and
// objects created with raw SQL, the policy planned and inspected as the executing role (SET ROLE), catalog
// facts read with libs/catalog, and the artifact built, schema-validated and checked.
import { inspect, openConnection, readReviewFacts } from '@rolepolicy/catalog';
import {
  computePlan,
  contentDigest,
  deriveManagedScope,
  expandPolicy,
  type PolicyContent,
} from '@rolepolicy/policy';
import {
  createPostgresSandbox,
  DEFAULT_PG_ADMIN_URL,
  sandboxId,
  type PostgresSandbox,
} from '@rolepolicy/testing';

import { dropRolesWithPrefix, runSql } from '../../catalog/src/test-support/scope.js';
import {
  buildReviewArtifact,
  serializeReviewArtifact,
  validateReviewArtifact,
  type ReviewArtifact,
} from './index.js';

let sandbox: PostgresSandbox;
const p = `rp_${sandboxId()}_`;
const r = (name: string): string => `${p}${name}`;

beforeAll(async () => {
  sandbox = await createPostgresSandbox('review');
});

afterAll(async () => {
  await dropRolesWithPrefix(DEFAULT_PG_ADMIN_URL, [sandbox.url], p);
  await sandbox.drop();
});

/** Plans `content` on the sandbox as `executor` (null: the connecting superuser) and builds the artifact. */
async function review(
  content: PolicyContent,
  executor: string | null,
  withFacts = true,
): Promise<ReviewArtifact> {
  const expansion = expandPolicy(content, { policyName: 'review' });
  if (!expansion.ok) throw new Error(expansion.errors.map((e) => `${e.path}: ${e.message}`).join('\n'));
  const desired = expansion.desired;
  const scope = deriveManagedScope(desired);
  const connection = openConnection({ url: sandbox.url, setRole: executor });
  try {
    const snapshot = await inspect(connection.db, scope, connection.target);
    const plan = computePlan({
      desired,
      snapshot,
      mode: desired.reconciliation_mode,
      passwordSources: {},
      appliedPasswordSourceVersions: {},
      allowSchemaOwnerTransfers: true,
    });
    const facts = withFacts
      ? await readReviewFacts(connection.db, plan.changes, snapshot.server_version_num)
      : null;
    const artifact = buildReviewArtifact({
      toolVersion: 'test',
      capturedAt: '2026-11-25T12:00:00Z',
      contentDigest: contentDigest(content).digest,
      targetLabel: 'sandbox',
      document: 'policy.yaml',
      mode: desired.reconciliation_mode,
      desired,
      scope,
      snapshot,
      plan,
      facts,
    });
    const validation = validateReviewArtifact(JSON.parse(serializeReviewArtifact(artifact)));
    expect(validation.ok ? [] : validation.errors).toEqual([]);
    return artifact;
  } finally {
    await connection.close();
  }
}

const kinds = (a: ReviewArtifact) => a.recorded.findings.map((f) => f.kind);
const check = (a: ReviewArtifact, name: string) => a.preflight.find((x) => x.check === name)!;
const codes = (a: ReviewArtifact, name: string) => check(a, name).issues.map((i) => i.code);

describe('review preflight and findings on PostgreSQL 15', () => {
  it('superuser_required: a CREATEROLE non-superuser executor asked to alter a superuser', async () => {
    await runSql(
      sandbox.url,
      `CREATE ROLE "${r('cr_exec')}" LOGIN CREATEROLE; CREATE ROLE "${r('root')}" SUPERUSER NOLOGIN;`,
    );
    const artifact = await review(
      { roles: [{ name: r('root'), superuser: true, login: true }] },
      r('cr_exec'),
    );
    const finding = artifact.recorded.findings.find((f) => f.kind === 'superuser_required')!;
    expect(finding).toMatchObject({ severity: 'error', role: r('root'), phase: 'alter' });
    expect(finding.message).toContain(`alter_role on superuser "${r('root')}"`);
    expect(check(artifact, 'executor_authority')).toMatchObject({
      status: 'failed',
      actor_role: r('cr_exec'),
    });
    expect(codes(artifact, 'executor_authority')).toEqual(['superuser_required']);
    expect(artifact.context.inspector).toEqual({ role: r('cr_exec'), superuser: false });
  });

  it('executor_loses_access and membership_disconnects_role: a membership removal cuts the executor off the owner it needs later', async () => {
    await runSql(
      sandbox.url,
      [
        `CREATE ROLE "${r('lx_exec')}" LOGIN CREATEROLE`,
        `CREATE ROLE "${r('lx_owners')}" NOLOGIN`,
        `CREATE ROLE "${r('lx_reader')}" NOLOGIN`,
        `GRANT "${r('lx_owners')}" TO "${r('lx_exec')}"`,
        `CREATE SCHEMA "${r('lx')}" AUTHORIZATION "${r('lx_owners')}"`,
        `ALTER DEFAULT PRIVILEGES FOR ROLE "${r('lx_owners')}" IN SCHEMA "${r('lx')}" GRANT SELECT ON TABLES TO "${r('lx_reader')}"`,
      ].join(';'),
    );
    const artifact = await review(
      {
        roles: [{ name: r('lx_owners') }, { name: r('lx_reader') }],
        grants: [{ role: r('lx_reader'), object: { type: 'schema', name: r('lx') }, privileges: ['USAGE'] }],
      },
      r('lx_exec'),
    );
    const kindsOf = artifact.recorded.changes.map((c) => c.change.kind);
    expect(kindsOf).toEqual(['grant', 'remove_member', 'revoke_default_privilege']);
    const lost = artifact.recorded.findings.find((f) => f.kind === 'executor_loses_access')!;
    expect(lost).toMatchObject({
      severity: 'error',
      phase: 'membership_remove',
      role: r('lx_owners'),
      change_index: 1,
      change_indices: [2],
    });
    expect(kinds(artifact)).toContain('membership_disconnects_role');
    expect(codes(artifact, 'executor_authority')).toEqual(
      expect.arrayContaining(['executor_loses_access', 'default_privilege_owner_unusable']),
    );
    const removal = artifact.recorded.phases.find((ph) => ph.phase === 'membership_remove')!;
    expect(removal.executor_reachability_delta.changed).toEqual([
      { role: r('lx_owners'), status: 'unreachable' },
    ]);
    expect(removal.executor_usage_delta.changed).toEqual([{ role: r('lx_owners'), status: 'unreachable' }]);
    expect(artifact.context.authority_graph_complete).toBe(true);
  });

  it('role_drop_safety: a retired role that still owns objects, holds privileges and is a member', async () => {
    await runSql(
      sandbox.url,
      [
        `CREATE ROLE "${r('legacy')}" LOGIN`,
        `CREATE ROLE "${r('legacy_grp')}" NOLOGIN`,
        `GRANT "${r('legacy_grp')}" TO "${r('legacy')}"`,
        `CREATE TABLE public."${r('legacy_t')}" (id int)`,
        `ALTER TABLE public."${r('legacy_t')}" OWNER TO "${r('legacy')}"`,
        `CREATE TABLE public."${r('shared_t')}" (id int)`,
        `GRANT SELECT ON public."${r('shared_t')}" TO "${r('legacy')}"`,
      ].join(';'),
    );
    const artifact = await review({ retirements: [{ role: r('legacy') }] }, null);
    const drop = check(artifact, 'role_drop_safety');
    expect(drop.status).toBe('failed');
    expect(drop.coverage.checks_performed).toEqual(['drop_role_safety']);
    expect(drop.issues.map((i) => i.code).sort()).toEqual([
      'holds_privileges',
      'owns_objects',
      'still_member',
    ]);
    expect(drop.issues.find((i) => i.code === 'owns_objects')!.message).toContain(
      `table public.${r('legacy_t')}`,
    );

    const neutralised = await review(
      { retirements: [{ role: r('legacy'), drop_owned: true, reassign_owned_to: 'postgres' }] },
      null,
    );
    expect(codes(neutralised, 'role_drop_safety')).toEqual(['still_member']);
  });

  it('database_preflight_required: an offline review (snapshot only) of a drop and a default privilege', async () => {
    await runSql(
      sandbox.url,
      [
        `CREATE ROLE "${r('off_exec')}" LOGIN CREATEROLE`,
        `CREATE ROLE "${r('off_old')}" LOGIN`,
        `CREATE ROLE "${r('off_own')}" NOLOGIN`,
        `CREATE ROLE "${r('off_rd')}" NOLOGIN`,
        `GRANT "${r('off_own')}" TO "${r('off_exec')}"`,
      ].join(';'),
    );
    const content: PolicyContent = {
      roles: [
        { name: r('off_own'), external: true },
        { name: r('off_rd'), external: true },
      ],
      default_privileges: [
        {
          owner: r('off_own'),
          scope: { type: 'global' },
          grant: [{ role: r('off_rd'), on_type: 'function', privileges: ['EXECUTE'] }],
        },
      ],
      retirements: [{ role: r('off_old') }],
    };
    const offline = await review(content, r('off_exec'), false);
    const finding = offline.recorded.findings.find((f) => f.kind === 'database_preflight_required')!;
    expect(finding.severity).toBe('warning');
    expect(finding.change_indices.length).toBe(offline.recorded.changes.length);
    expect(check(offline, 'role_drop_safety').status).toBe('not_run');
    expect(check(offline, 'executor_authority').status).toBe('unknown');
    const online = await review(content, r('off_exec'));
    expect(kinds(online)).not.toContain('database_preflight_required');
    expect(check(online, 'role_drop_safety').status).toBe('passed');
    expect(check(online, 'executor_authority').status).toBe('passed');
  });

  it('required_role_unavailable and required_role_reachability_unknown: an external role not created yet, an undeclared member', async () => {
    await runSql(sandbox.url, `CREATE SCHEMA "${r('ext')}"; CREATE ROLE "${r('ext_grp')}" NOLOGIN;`);
    const artifact = await review(
      {
        roles: [{ name: r('partner'), external: true }, { name: r('ext_grp') }],
        grants: [{ role: r('partner'), object: { type: 'schema', name: r('ext') }, privileges: ['USAGE'] }],
        memberships: [{ role: r('ext_grp'), members: [{ name: r('someone') }] }],
      },
      null,
    );
    const unavailable = artifact.recorded.findings.find((f) => f.kind === 'required_role_unavailable')!;
    expect(unavailable).toMatchObject({ severity: 'error', role: r('partner') });
    const unknown = artifact.recorded.findings.find((f) => f.kind === 'required_role_reachability_unknown')!;
    expect(unknown).toMatchObject({ severity: 'warning', role: r('someone') });
  });

  it('server_compatibility: per-membership inherit: false on PostgreSQL 15', async () => {
    await runSql(sandbox.url, `CREATE ROLE "${r('inh_grp')}" NOLOGIN; CREATE ROLE "${r('inh_user')}" LOGIN;`);
    const artifact = await review(
      {
        roles: [{ name: r('inh_grp') }, { name: r('inh_user'), login: true }],
        memberships: [{ role: r('inh_grp'), members: [{ name: r('inh_user'), inherit: false }] }],
      },
      null,
    );
    expect(artifact.provenance.pg_major_version).toBe(15);
    expect(check(artifact, 'server_compatibility').status).toBe('failed');
    expect(codes(artifact, 'server_compatibility')).toEqual(['per_edge_inherit_unsupported']);
  });

  it('role_becomes_reachable: a membership gives a login role a path to a CREATEROLE role', async () => {
    await runSql(
      sandbox.url,
      `CREATE ROLE "${r('admins')}" NOLOGIN CREATEROLE; CREATE ROLE "${r('dev')}" LOGIN;`,
    );
    const artifact = await review(
      {
        roles: [
          { name: r('admins'), createrole: true },
          { name: r('dev'), login: true },
        ],
        memberships: [{ role: r('admins'), members: [{ name: r('dev') }] }],
      },
      null,
    );
    const finding = artifact.recorded.findings.find((f) => f.kind === 'role_becomes_reachable')!;
    expect(finding).toMatchObject({ severity: 'warning', role: r('dev'), phase: 'membership_add' });
    expect(finding.message).toContain(`"${r('admins')}"`);
  });

  it("predefined_role_membership and default_privilege_owner: an executor without CREATEROLE or the owner's privileges", async () => {
    await runSql(
      sandbox.url,
      [
        `CREATE ROLE "${r('plain_exec')}" LOGIN`,
        `CREATE ROLE "${r('mon')}" LOGIN`,
        `CREATE ROLE "${r('own2')}" NOLOGIN`,
        `CREATE ROLE "${r('rd2')}" NOLOGIN`,
        `CREATE SCHEMA "${r('dp')}" AUTHORIZATION "${r('own2')}"`,
      ].join(';'),
    );
    const artifact = await review(
      {
        roles: [
          { name: r('own2'), external: true },
          { name: r('rd2'), external: true },
          { name: r('mon'), external: true },
        ],
        memberships: [{ role: 'pg_monitor', members: [{ name: r('mon') }] }],
        default_privileges: [
          {
            owner: r('own2'),
            schema: r('dp'),
            grant: [{ role: r('rd2'), on_type: 'table', privileges: ['SELECT'] }],
          },
        ],
      },
      r('plain_exec'),
    );
    expect(check(artifact, 'executor_authority').status).toBe('failed');
    expect(codes(artifact, 'executor_authority').sort()).toEqual([
      'default_privilege_owner_unusable',
      'predefined_role_admin_required',
    ]);
    expect(codes(artifact, 'server_compatibility')).toEqual([]);
  });

  it('ownership_transfer_changes_grantor: a schema handed to its declared owner', async () => {
    await runSql(sandbox.url, `CREATE SCHEMA "${r('moved')}"; CREATE ROLE "${r('new_owner')}" NOLOGIN;`);
    const artifact = await review(
      { roles: [{ name: r('new_owner') }], schemas: [{ name: r('moved'), owner: r('new_owner') }] },
      null,
    );
    const finding = artifact.recorded.findings.find((f) => f.kind === 'ownership_transfer_changes_grantor')!;
    expect(finding).toMatchObject({ severity: 'warning', role: r('new_owner'), phase: 'alter' });
    expect(check(artifact, 'executor_authority').status).toBe('passed');
  });
});
