// Golden artifacts of the realistic policy on PostgreSQL 15 and 16 semantics, byte-identical output for
// identical input, and the input rules (timestamp, label, digest). Every artifact is schema-validated.
// Regenerate the goldens after an intended change with UPDATE_GOLDEN=1 and review the diff.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import { canonicalJson, sha256Digest, type MembershipEdge } from '@rolepolicy/policy';

import { REVIEW_FINGERPRINT_ENCODING } from './build-artifact.js';
import {
  buildReviewArtifact,
  formatReviewArtifactJson,
  serializeReviewArtifact,
  validateReviewArtifact,
  type ReviewArtifact,
} from './index.js';
import { REALISTIC_FACTS, realisticReviewInput } from './test-support/realistic.js';

const GOLDEN_DIR = fileURLToPath(new URL('./__golden__/', import.meta.url));

function valid(artifact: ReviewArtifact): ReviewArtifact {
  const result = validateReviewArtifact(JSON.parse(serializeReviewArtifact(artifact)));
  expect(result.ok ? [] : result.errors).toEqual([]);
  return artifact;
}

function golden(name: string, text: string): void {
  const path = `${GOLDEN_DIR}${name}`;
  if (process.env['UPDATE_GOLDEN'] === '1') writeFileSync(path, text);
  expect(text).toBe(readFileSync(path, 'utf8'));
}

describe('review artifact of the realistic policy', () => {
  it.each([
    ['PostgreSQL 15', 150019, 'realistic-pg15.json'],
    ['PostgreSQL 16', 160010, 'realistic-pg16.json'],
  ])('%s: equals the golden artifact', (_label, version, file) => {
    golden(file, formatReviewArtifactJson(valid(buildReviewArtifact(realisticReviewInput(version)))));
  });

  it('differs between 15 and 16 exactly where the server semantics differ', () => {
    const pg15 = buildReviewArtifact(realisticReviewInput(150019));
    const pg16 = buildReviewArtifact(realisticReviewInput(160010));
    const compat = (a: ReviewArtifact) => a.preflight.find((p) => p.check === 'server_compatibility')!;
    expect(compat(pg15).issues.map((i) => i.code)).toEqual(['per_edge_inherit_unsupported']);
    expect(compat(pg16).issues).toEqual([]);
    expect(pg15.provenance.pg_major_version).toBe(15);
    expect(pg16.provenance.pg_major_version).toBe(16);
    // PG16 gives a CREATEROLE executor an ADMIN (not INHERIT) edge to every role it creates.
    const created = pg16.recorded.phases[0]!.executor_reachability_delta.changed;
    expect(created).toContainEqual({ role: 'orders-editor', status: 'reachable' });
    expect(pg16.recorded.phases[0]!.executor_usage_delta.changed).toContainEqual({
      role: 'orders-editor',
      status: 'unreachable',
    });
    expect(pg15.recorded.phases[0]!.executor_reachability_delta.changed).toContainEqual({
      role: 'orders-editor',
      status: 'unreachable',
    });
  });

  it('records every phase as a contiguous run and every change once, with priorities by kind', () => {
    const artifact = buildReviewArtifact(realisticReviewInput(150019));
    const { changes, phases } = artifact.recorded;
    expect(phases.flatMap((p) => p.change_indices)).toEqual(changes.map((c) => c.index));
    expect(phases.map((p) => p.phase)).toEqual([
      'create',
      'alter',
      'grant',
      'membership_remove',
      'membership_add',
      'revoke',
      'retire',
    ]);
    const priority = (kind: string) => [
      ...new Set(changes.filter((c) => c.change.kind === kind).map((c) => c.priority)),
    ];
    expect(priority('drop_role')).toEqual(['High']);
    expect(priority('set_password')).toEqual(['High']);
    expect(priority('revoke')).toEqual(['Review']);
    expect(priority('grant')).toEqual(['Informational']);
  });

  it('never records the role comment, config values or the password source; omissions say what was removed', () => {
    const artifact = buildReviewArtifact(realisticReviewInput(150019));
    const text = serializeReviewArtifact(artifact);
    expect(text).not.toContain('Checkout service');
    expect(text).not.toContain('30s');
    expect(text).not.toContain('app-db');
    expect(text).not.toContain('Generated from profile');
    const password = artifact.recorded.changes.find((c) => c.change.kind === 'set_password')!;
    expect(password.change).toEqual({ kind: 'set_password', name: 'app' });
    expect(password.omissions).toEqual([{ field: 'password', reason: 'sensitive_value' }]);
    const config = artifact.recorded.changes.find((c) => c.change.kind === 'alter_role')!;
    expect(config.change).toEqual({
      kind: 'alter_role',
      name: 'app',
      attributes: [{ kind: 'set_config', parameter: 'statement_timeout' }],
    });
    expect(artifact.recorded.sql_preview).toEqual({
      status: 'omitted',
      reason: 'sensitive_changes',
      sensitive_change_indices: artifact.recorded.changes
        .filter((c) => (c.omissions ?? []).length > 0)
        .map((c) => c.index),
    });
    expect(artifact.exploration).toEqual({ status: 'omitted', reason: 'sensitive_inputs_removed' });
  });

  it('is byte-identical for identical input, whatever the order of the input arrays', () => {
    const a = serializeReviewArtifact(buildReviewArtifact(realisticReviewInput(160010)));
    const input = realisticReviewInput(160010);
    const shuffled = {
      ...input,
      snapshot: {
        ...input.snapshot,
        roles: [...input.snapshot.roles].reverse(),
        grants: [...input.snapshot.grants].reverse(),
        memberships: [...input.snapshot.memberships].reverse(),
        existing_roles: [...input.snapshot.existing_roles].reverse(),
      },
    };
    expect(serializeReviewArtifact(buildReviewArtifact(shuffled))).toBe(a);
    expect(serializeReviewArtifact(buildReviewArtifact(realisticReviewInput(160010)))).toBe(a);
  });

  it('composes the serialization and the fingerprint from parts encoded once, byte for byte as a whole encoding', () => {
    for (const version of [150019, 160010]) {
      const artifact = buildReviewArtifact(realisticReviewInput(version));
      // A structural copy shares no object with the built artifact, so nothing encoded earlier is reused.
      const copy = JSON.parse(JSON.stringify(artifact)) as ReviewArtifact;
      expect(serializeReviewArtifact(artifact)).toBe(canonicalJson(copy));
      const { review_fingerprint, ...recorded } = copy.recorded;
      const fingerprinted = {
        encoding: REVIEW_FINGERPRINT_ENCODING,
        content_digest: copy.provenance.policy.content_digest,
        target_label: copy.provenance.target_label,
        pg_major_version: copy.provenance.pg_major_version,
        context: copy.context,
        preflight: copy.preflight,
        recorded,
      };
      expect(review_fingerprint).toBe(sha256Digest(canonicalJson(fingerprinted)));
      // A copy with a part replaced encodes that part afresh.
      const edited = { ...artifact, recorded: { ...artifact.recorded, findings: [] } };
      expect(serializeReviewArtifact(edited)).toBe(
        canonicalJson({ ...copy, recorded: { ...copy.recorded, findings: [] } }),
      );
    }
  });

  it('binds the review fingerprint to what is reviewed, not to when or by which tool version', () => {
    const base = buildReviewArtifact(realisticReviewInput(150019));
    const later = buildReviewArtifact({
      ...realisticReviewInput(150019),
      capturedAt: '2026-12-01T08:30:00+01:00',
      toolVersion: '9.9.9',
    });
    expect(later.recorded.review_fingerprint).toBe(base.recorded.review_fingerprint);
    const other = buildReviewArtifact({ ...realisticReviewInput(150019), mode: 'adopt' });
    expect(other.recorded.review_fingerprint).not.toBe(base.recorded.review_fingerprint);
  });

  it('records a caller-supplied timestamp and refuses a malformed one, naming the field', () => {
    expect(() => buildReviewArtifact({ ...realisticReviewInput(150019), capturedAt: 'yesterday' })).toThrow(
      'provenance.captured_at must be an RFC 3339 timestamp (e.g. 2026-11-25T12:00:00Z), got "yesterday"',
    );
  });

  it.each(['postgres://app:secret@db:5432/shop', 'postgresql://db/shop', 'app:secret@db'])(
    'refuses a connection URL as target_label (%s)',
    (label) => {
      expect(() => buildReviewArtifact({ ...realisticReviewInput(150019), targetLabel: label })).toThrow(
        'provenance.target_label must be a human-readable label, never a connection URL',
      );
    },
  );

  it('offline (no catalog facts): authority is unknown, drop safety not_run, and a finding asks for the database', () => {
    const artifact = valid(buildReviewArtifact({ ...realisticReviewInput(150019), facts: null }));
    expect(artifact.context.authority_graph_complete).toBe(false);
    const status = Object.fromEntries(artifact.preflight.map((p) => [p.check, p.status]));
    expect(status).toEqual({
      executor_authority: 'unknown',
      role_drop_safety: 'not_run',
      server_compatibility: 'failed',
    });
    const drop = artifact.preflight.find((p) => p.check === 'role_drop_safety')!;
    expect(drop.coverage).toEqual({
      kind: 'targeted',
      checks_performed: [],
      checked_change_indices: [],
      unchecked_change_indices: [27],
    });
    expect(artifact.recorded.findings.map((f) => f.kind)).toContain('database_preflight_required');
    const first = artifact.recorded.phases[0]!.executor_reachability_delta.changed;
    expect(first.length).toBeGreaterThan(5);
    expect(first.filter((d) => d.status !== 'unknown')).toEqual([
      { role: 'rolepolicy_executor', status: 'reachable' },
    ]);
  });
});

describe("the role graph covers the plan's snapshot and the executor's way up to the roles it tracks (ADR 0028)", () => {
  const input = realisticReviewInput(160010);
  const decisive = [
    ...REALISTIC_FACTS.executor_memberships,
    // On the executor's way up to a privileged predefined role: role_becomes_reachable looks for those.
    { role: 'pg_write_server_files', member: 'app_owner', inherit: true, admin: false, grantor: null },
  ];
  const beyond = [
    // Up from the executor, but to no role the plan names or manages.
    { role: 'platform_admins', member: 'app_owner', inherit: true, admin: false, grantor: null },
    // PostgreSQL 16: a CREATEROLE executor is an ADMIN member of every role it created, another tenant's too.
    { role: 'tenant_b_group', member: 'rolepolicy_executor', inherit: false, admin: true, grantor: null },
    { role: 'tenant_b_group', member: 'tenant_b_app', inherit: true, admin: false, grantor: null },
  ];
  const withEdges = (edges: readonly MembershipEdge[], superuser: boolean) =>
    buildReviewArtifact({
      ...input,
      snapshot: { ...input.snapshot, executor: { ...input.snapshot.executor, superuser } },
      facts: { ...REALISTIC_FACTS, executor_memberships: edges },
    });

  it.each([
    ['a CREATEROLE executor', false],
    ['a superuser executor', true],
  ])(
    '%s: other memberships in the facts are neither drawn nor change a status or finding',
    (_l, superuser) => {
      const given = valid(withEdges([...beyond, ...decisive], superuser));
      const text = serializeReviewArtifact(given);
      expect(text).toBe(serializeReviewArtifact(withEdges(decisive, superuser)));
      expect(text).not.toMatch(/tenant_b|platform_admins/);
      expect(given.recorded.visual.edges).toContainEqual(
        expect.objectContaining({ source: 'role:app_owner', target: 'external:pg_write_server_files' }),
      );
    },
  );
});
