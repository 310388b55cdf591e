// Guard for work on the builder's speed: the canonical bytes of the artifact for a set of representative
// inputs (the realistic and 200-role scenarios in several identities, and 80 seeded random plans) are pinned
// by their digests in __golden__/artifact-digests.json. A change that alters any byte fails here; regenerate
// with UPDATE_GOLDEN=1 only for an intended change of content, and say which spec rule asks for it.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import fc from 'fast-check';
import {
  canonicalJson,
  computePlan,
  contentDigest,
  deriveManagedScope,
  expandPolicy,
  sha256Digest,
  type CatalogSnapshot,
  type PolicyContent,
} from '@rolepolicy/policy';

import { roleState } from '../../policy/src/diff/test-support/builders.js';
import { desiredArb, snapshotArb } from '../../policy/src/diff/test-support/generators.js';
import { buildReviewArtifact, serializeReviewArtifact, type ReviewInput } from './index.js';
import { largeReviewInput } from './test-support/large.js';
import { REALISTIC_FACTS, realisticReviewInput } from './test-support/realistic.js';

const GOLDEN = fileURLToPath(new URL('./__golden__/artifact-digests.json', import.meta.url));

/** The realistic policy on a database that has none of it yet (a fleet policy's first plan). */
function realisticFresh(): ReviewInput {
  const input = realisticReviewInput(160010);
  const snapshot = {
    ...input.snapshot,
    roles: input.snapshot.roles.filter((r) => r.name === 'app_owner'),
    grants: [],
    memberships: [],
    existing_roles: ['app_owner'],
  };
  const plan = computePlan({
    desired: input.desired,
    snapshot,
    mode: input.mode,
    passwordSources: { app: 'app-db:password:1' },
    appliedPasswordSourceVersions: {},
    allowSchemaOwnerTransfers: false,
  });
  return { ...input, snapshot, plan };
}

/**
 * A superuser executor on a shared server, with the review facts a superuser's catalog read returned before
 * ADR 0028: every membership of the server (here 60 other fleet policies' two each, and an edge granted by a
 * named grantor). None is on a path upward from the executor, so the artifact leaves them all out.
 */
function realisticSharedServer(): ReviewInput {
  const input = realisticReviewInput(160010);
  const executor = { ...input.snapshot.executor, role: 'postgres', superuser: true };
  const others = Array.from({ length: 60 }, (_, k) => `t${String(k).padStart(2, '0')}_`).flatMap((p, k) => [
    { role: `${p}orders_editor`, member: `${p}app`, inherit: true, admin: false, grantor: null },
    {
      role: `${p}billing_viewer`,
      member: `${p}reporting`,
      inherit: k % 2 === 0,
      admin: false,
      grantor: null,
    },
  ]);
  const edges = [
    ...others,
    { role: 'app_owner', member: 'deployer', inherit: true, admin: true, grantor: 'postgres' },
  ];
  return {
    ...input,
    snapshot: { ...input.snapshot, executor },
    facts: { ...REALISTIC_FACTS, executor_memberships: edges },
  };
}

/**
 * preflight.int-spec.ts's executor_loses_access scenario, by hand: a CREATEROLE executor that belongs to the
 * owner role the plan removes it from before revoking the owner's default privilege (phases grant,
 * membership_remove, default_privilege_revoke; the last changes no role and no membership), on PostgreSQL 15.
 */
function executorLosesAccess(): ReviewInput {
  const content: PolicyContent = {
    roles: [{ name: 'lx_owners' }, { name: 'lx_reader' }],
    grants: [{ role: 'lx_reader', object: { type: 'schema', name: 'lx' }, privileges: ['USAGE'] }],
  };
  const expansion = expandPolicy(content, { policyName: 'review' });
  if (!expansion.ok) throw new Error('the scenario does not expand');
  const desired = expansion.desired;
  const edge = { role: 'lx_owners', member: 'lx_exec', inherit: true, admin: false, grantor: null };
  const snapshot: CatalogSnapshot = {
    server_version_num: 150004,
    current_database: 'shop',
    executor: { role: 'lx_exec', superuser: false, createrole: true, member_of: ['lx_owners'] },
    identity: { physical: '7412330000000000001', physical_available: true, logical_fingerprint: null },
    roles: [
      { name: 'lx_owners', state: roleState({}) },
      { name: 'lx_reader', state: roleState({}) },
    ],
    schemas: [{ name: 'lx', owner: 'lx_owners', owner_privileges: ['CREATE', 'USAGE'] }],
    grants: [],
    default_privileges: [
      {
        owner: 'lx_owners',
        scope: { type: 'schema', schema: 'lx' },
        on_type: 'table',
        grantee: 'lx_reader',
        privileges: ['SELECT'],
      },
    ],
    memberships: [edge],
    inventory: [],
    unsatisfiable_wildcards: [],
    existing_roles: ['lx_exec', 'lx_owners', 'lx_reader'],
    function_signatures: [],
  };
  const plan = computePlan({
    desired,
    snapshot,
    mode: desired.reconciliation_mode,
    passwordSources: {},
    appliedPasswordSourceVersions: {},
    allowSchemaOwnerTransfers: false,
  });
  return {
    toolVersion: '0.1.0',
    capturedAt: '2026-11-25T12:00:00Z',
    contentDigest: contentDigest(content).digest,
    targetLabel: 'shop',
    document: 'PostgresPolicy/shop/review',
    mode: desired.reconciliation_mode,
    desired,
    scope: deriveManagedScope(desired),
    snapshot,
    plan,
    facts: { executor_memberships: [edge], drop_roles: [], predefined_roles: [] },
  };
}

/** Seeded random plans (the engine's generators), alternately with and without catalog facts. */
function randomInputs(): [string, ReviewInput][] {
  const samples = fc.sample(fc.tuple(desiredArb, snapshotArb), { seed: 28, numRuns: 80 });
  return samples.map(([desired, snapshot], i) => {
    const sources = Object.fromEntries(
      desired.roles.flatMap((r) => (r.password ? [[r.name, `${r.name}:password:${i}`]] : [])),
    );
    const plan = computePlan({
      desired,
      snapshot,
      mode: desired.reconciliation_mode,
      passwordSources: sources,
      appliedPasswordSourceVersions: {},
      allowSchemaOwnerTransfers: i % 3 === 0,
    });
    const input: ReviewInput = {
      toolVersion: '0.1.0',
      capturedAt: '2026-11-25T12:00:00Z',
      contentDigest: `sha256:${'0'.repeat(64)}`,
      targetLabel: `random ${i}`,
      document: 'policy.yaml',
      mode: desired.reconciliation_mode,
      desired,
      scope: deriveManagedScope(desired),
      snapshot,
      plan,
      facts: i % 2 === 0 ? null : { executor_memberships: [], drop_roles: [], predefined_roles: [] },
    };
    return [`random-${String(i).padStart(2, '0')}`, input];
  });
}

function cases(): [string, ReviewInput][] {
  const pg16 = realisticReviewInput(160010);
  return [
    ['realistic-pg15', realisticReviewInput(150019)],
    ['realistic-pg16', pg16],
    ['realistic-pg15-offline', { ...realisticReviewInput(150019), facts: null }],
    ['realistic-pg16-other-executor', { ...pg16, intendedExecutor: { role: 'deployer', superuser: false } }],
    [
      'realistic-pg16-superuser',
      { ...pg16, snapshot: { ...pg16.snapshot, executor: { ...pg16.snapshot.executor, superuser: true } } },
    ],
    ['realistic-fresh-database', realisticFresh()],
    ['realistic-shared-server-superuser', realisticSharedServer()],
    ['executor-loses-access', executorLosesAccess()],
    ['large-200-roles', largeReviewInput()],
    ['large-200-roles-offline', { ...largeReviewInput(), facts: null }],
    ...randomInputs(),
  ];
}

describe('review artifact bytes', () => {
  it('are the pinned ones for every representative input, and compose to a whole encoding', () => {
    const digests: Record<string, string> = {};
    for (const [name, input] of cases()) {
      const text = serializeReviewArtifact(buildReviewArtifact(input));
      // Parts encoded once and reused must give the bytes a full encoding of a structural copy gives.
      expect(canonicalJson(JSON.parse(text))).toBe(text);
      digests[name] = sha256Digest(text);
    }
    const text = `${JSON.stringify(digests, null, 2)}\n`;
    if (process.env['UPDATE_GOLDEN'] === '1') writeFileSync(GOLDEN, text);
    expect(digests).toEqual(JSON.parse(readFileSync(GOLDEN, 'utf8')));
  });

  it('cover an executor that loses the access a later phase needs, and a superuser given server-wide facts', () => {
    const lost = buildReviewArtifact(executorLosesAccess());
    expect(lost.recorded.phases.map((p) => p.phase)).toEqual([
      'grant',
      'membership_remove',
      'default_privilege_revoke',
    ]);
    expect(lost.recorded.findings.map((f) => f.kind)).toEqual(
      expect.arrayContaining(['executor_loses_access', 'membership_disconnects_role']),
    );
    // Facts beyond the paths upward from the executor decide nothing and are not drawn (ADR 0028): the
    // artifact is byte for byte the one built without them.
    const input = realisticSharedServer();
    const shared = serializeReviewArtifact(buildReviewArtifact(input));
    const scoped = { ...input, facts: { ...input.facts!, executor_memberships: [] } };
    expect(shared).toBe(serializeReviewArtifact(buildReviewArtifact(scoped)));
    expect(shared).not.toMatch(/t00_app|deployer/);
  });
});
