// Spec PostgresPolicyPlan: every spec/status field, ownerReference to the policy, SQL inline below a
// threshold, gzip ConfigMap (sqlRef) above it, sqlTruncated when even that cannot fit.
import { gunzipSync } from 'node:zlib';
import { AUTO_APPROVER } from './approval.js';
import { MAX_PLAN_NAME_LENGTH, buildPlan, isOwnedBy, labelValue, planName } from './plan-builder.js';
import { SQL_INLINE_MAX_BYTES, sha256Hex, storeSql, truncateUtf8 } from './sql-storage.js';
import { at, computed, policy } from './test-support/fixtures.js';

describe('plan resource builder', () => {
  const now = at(0);

  it('fills every spec field from the policy and the computed plan', () => {
    const p = policy({ reconciliation_mode: 'authoritative' }, { generation: 7 });
    const { plan } = buildPlan({
      policy: p,
      computed: computed('A'),
      existingPlanNames: [],
      now,
      autoApprove: false,
    });
    expect(plan.spec).toEqual({
      managedDatabaseIdentity: 'team-a/db-credentials/DATABASE_URL',
      policyGeneration: 7,
      policyRef: { name: 'orders' },
      reconciliationMode: 'authoritative',
      ownedRoles: ['app'],
      ownedSchemas: ['inventory'],
    });
    expect(plan.metadata.namespace).toBe('team-a');
  });

  it('is owned by its policy through a controller ownerReference (identity by uid)', () => {
    const p = policy();
    const { plan } = buildPlan({
      policy: p,
      computed: computed('A'),
      existingPlanNames: [],
      now,
      autoApprove: false,
    });
    expect(plan.metadata.ownerReferences).toEqual([
      {
        apiVersion: 'rolepolicy.io/v1alpha1',
        kind: 'PostgresPolicy',
        name: 'orders',
        uid: 'uid-orders',
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    expect(isOwnedBy(plan, p)).toBe(true);
    expect(isOwnedBy(plan, policy({}, { uid: 'uid-recreated' }))).toBe(false);
  });

  it("never counts a scoped (ephemeral access) plan as the policy's own, even under its ownerReference", () => {
    const p = policy({});
    const { plan } = buildPlan({
      policy: p,
      computed: computed('A'),
      existingPlanNames: [],
      now,
      autoApprove: false,
    });
    const scoped = {
      ...plan,
      spec: {
        ...plan.spec,
        scope: { kind: 'MembershipBundle', operation: 'Activate' as const, bundleHash: 'sha256:b' },
      },
    };
    expect(isOwnedBy(scoped, p)).toBe(false);
  });

  it('records digests, identities, hashes, counts and timestamps in status', () => {
    const c = computed('A', 3, { passwordSourceDigest: 'sha256:pw' });
    const { plan } = buildPlan({
      policy: policy({}, { generation: 4 }),
      computed: c,
      existingPlanNames: [],
      now,
      autoApprove: false,
    });
    expect(plan.status).toMatchObject({
      phase: 'Pending',
      decidedBy: null,
      changeDigest: c.changeDigest,
      changeDigestEncoding: c.changeDigestEncoding,
      changeSummary: c.summary,
      computedAt: now,
      revalidatedAt: now,
      revalidatedGeneration: 4,
      passwordSourceDigest: 'sha256:pw',
      physicalIdentityAvailable: true,
      targetPhysicalIdentity: '7412330000000000001',
      targetLogicalFingerprint: 'sha256:fp',
      sqlHash: c.sql.sqlHash,
      redactedSqlHash: sha256Hex(c.sql.redactedSql),
      sqlInline: c.sql.redactedSql,
      sqlRef: null,
      sqlStatements: 3,
      sqlOriginalBytes: Buffer.byteLength(c.sql.redactedSql),
      sqlStoredBytes: Buffer.byteLength(c.sql.redactedSql),
      sqlTruncated: false,
      appliedAt: null,
      applyingSince: null,
      failedAt: null,
      lastError: null,
    });
    expect(plan.status?.conditions?.map((x) => [x.type, x.status, x.reason])).toEqual([
      ['Computed', 'True', 'PlanComputed'],
      ['Approved', 'False', 'PendingApproval'],
    ]);
  });

  it('records physicalIdentityAvailable=false when the identifier could not be read', () => {
    const c = computed('A', 1, {
      identity: { physical: null, physicalAvailable: false, logicalFingerprint: 'sha256:fp' },
    });
    const { plan } = buildPlan({
      policy: policy(),
      computed: c,
      existingPlanNames: [],
      now,
      autoApprove: false,
    });
    expect(plan.status?.physicalIdentityAvailable).toBe(false);
    expect(plan.status?.targetPhysicalIdentity).toBeNull();
  });

  it('auto approval records Approved=True and decidedBy in the same write', () => {
    const { plan } = buildPlan({
      policy: policy(),
      computed: computed('A'),
      existingPlanNames: [],
      now,
      autoApprove: true,
    });
    expect(plan.status?.phase).toBe('Approved');
    expect(plan.status?.decidedBy).toEqual(AUTO_APPROVER);
    expect(plan.status?.conditions?.find((x) => x.type === 'Approved')).toMatchObject({
      status: 'True',
      reason: 'AutoApproved',
    });
  });

  it('names plans <policy>-<12 hex of the digest>, then -2, -3 for repeated effects', () => {
    const d = computed('A').changeDigest;
    const first = planName('orders', d, []);
    expect(first).toMatch(/^orders-[0-9a-f]{12}$/);
    expect(planName('orders', d, [first])).toBe(`${first}-2`);
    expect(planName('orders', d, [first, `${first}-2`])).toBe(`${first}-3`);
    expect(planName('orders', d, ['unrelated'])).toBe(first);
  });

  it("never takes the name of another plan of the namespace it was only asked about (a policy's plans listed, the rest looked up)", () => {
    const d = computed('A').changeDigest;
    const first = planName('orders', d, []);
    const elsewhere = new Set([first, `${first}-3`]);
    expect(planName('orders', d, [`${first}-2`], (name) => elsewhere.has(name))).toBe(`${first}-4`);
    expect(planName('orders', d, [], () => false)).toBe(first);
  });

  it('keeps names within 253 characters including the ConfigMap suffix', () => {
    const long = `${'a'.repeat(240)}.b-c`;
    const name = planName(long, computed('A').changeDigest, []);
    expect(name.length).toBeLessThanOrEqual(MAX_PLAN_NAME_LENGTH);
    expect(`${name}-sql`.length).toBeLessThanOrEqual(253);
    expect(name).toMatch(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/);
  });

  it('label values are at most 63 characters and end alphanumeric', () => {
    expect(labelValue(`${'x'.repeat(62)}-y`)).toBe('x'.repeat(62));
    expect(labelValue('orders')).toBe('orders');
  });
});

describe('SQL storage: inline under 16 KiB, gzip ConfigMap above, truncated when it cannot fit', () => {
  it('keeps small SQL inline', () => {
    const s = storeSql('GRANT SELECT ON TABLE "a"."b" TO "r";\n');
    expect(s.storage.kind).toBe('inline');
    expect(s.sqlTruncated).toBe(false);
  });

  it('moves SQL above the inline threshold into a gzip ConfigMap referenced by sqlRef', () => {
    const sql = 'GRANT SELECT ON TABLE "inventory"."orders" TO "app";\n'.repeat(1000);
    expect(Buffer.byteLength(sql)).toBeGreaterThan(SQL_INLINE_MAX_BYTES);
    const built = buildPlan({
      policy: policy(),
      computed: computed('A', 1000, { sql: { sqlHash: 'h', redactedSql: sql, statementCount: 1000 } }),
      existingPlanNames: [],
      now: at(0),
      autoApprove: false,
    });
    const { plan, configMap } = built;
    expect(plan.status?.sqlInline).toBeNull();
    expect(plan.status?.sqlRef).toEqual({
      name: `${plan.metadata.name}-sql`,
      key: 'plan.sql.gz',
      compression: 'gzip',
    });
    expect(configMap?.metadata.name).toBe(`${plan.metadata.name}-sql`);
    expect(configMap?.metadata.ownerReferences?.[0]?.uid).toBe('uid-orders');
    const payload = configMap?.binaryData?.['plan.sql.gz'] ?? '';
    expect(gunzipSync(Buffer.from(payload, 'base64')).toString('utf8')).toBe(sql);
    expect(plan.status?.sqlOriginalBytes).toBe(Buffer.byteLength(sql));
    expect(plan.status?.sqlStoredBytes).toBe(Buffer.from(payload, 'base64').length);
    expect(plan.status?.sqlTruncated).toBe(false);
    expect(configMap?.metadata.annotations?.['rolepolicy.io/redacted-sql-hash']).toBe(sha256Hex(sql));
  });

  it('truncates the inline preview and sets sqlTruncated when even gzip cannot fit', () => {
    // Incompressible text against tiny limits exercises the branch without megabytes of SQL.
    const sql = Array.from({ length: 400 }, (_, i) => sha256Hex(String(i))).join('\n');
    const s = storeSql(sql, { inlineMaxBytes: 1024, configMapMaxGzipBytes: 512 });
    expect(s.storage.kind).toBe('truncated');
    expect(s.sqlTruncated).toBe(true);
    expect(s.sqlStoredBytes).toBeLessThanOrEqual(1024);
    if (s.storage.kind === 'truncated') expect(s.storage.sqlInline).toContain('-- truncated');
    expect(s.redactedSqlHash).toBe(sha256Hex(sql));
  });

  it('never splits a multi-byte character when truncating', () => {
    const text = 'é'.repeat(10);
    const cut = truncateUtf8(text, 5);
    expect(cut).toBe('éé');
    expect(Buffer.byteLength(cut)).toBeLessThanOrEqual(5);
  });

  it('never stores a password in the plan: only the redacted preview is persisted', () => {
    const redacted = `ALTER ROLE "app" PASSWORD '[REDACTED]';\n`;
    const { plan } = buildPlan({
      policy: policy(),
      computed: computed('A', 1, { sql: { sqlHash: 'h', redactedSql: redacted, statementCount: 1 } }),
      existingPlanNames: [],
      now: at(0),
      autoApprove: false,
    });
    expect(JSON.stringify(plan)).not.toMatch(/SCRAM-SHA-256/);
    expect(plan.status?.sqlInline).toBe(redacted);
  });
});
