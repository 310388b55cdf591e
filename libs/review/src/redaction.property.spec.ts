// Redaction property: across random plans with passwords, comments and config values, the artifact (JSON and
// HTML report) never contains cleartext, verifiers, secret names or connection strings, and sql_preview is omitted, listing the
// sensitive change indices, exactly when rendering the plan with real verifiers would expose a secret.
import { randomBytes } from 'node:crypto';

import fc from 'fast-check';
import {
  computePlan,
  deriveManagedScope,
  renderSql,
  scramSha256Verifier,
  type DesiredState,
} from '@rolepolicy/policy';

import { desiredArb, snapshotArb } from '../../policy/src/diff/test-support/generators.js';
import {
  buildReviewArtifact,
  renderReviewHtml,
  serializeReviewArtifact,
  validateReviewArtifact,
} from './index.js';

/** Puts a unique marker into every comment and config value, and a password on every login role. */
function withSecrets(desired: DesiredState, tag: string): DesiredState {
  return {
    ...desired,
    roles: desired.roles.map((role, i) => ({
      ...role,
      state: {
        ...role.state,
        comment: role.state.comment === null ? null : `CMT${tag}${i}`,
        config: Object.fromEntries(Object.keys(role.state.config).map((k) => [k, `CFG${tag}${i}`])),
      },
      password:
        role.state.login && !role.external
          ? { kind: 'secret_ref' as const, secretName: `SEC${tag}${i}`, secretKey: 'password' }
          : role.password,
    })),
  };
}

describe('review artifact redaction', () => {
  it('never leaks secrets, and omits sql_preview exactly when some change would render one', () => {
    fc.assert(
      fc.property(
        desiredArb,
        snapshotArb,
        fc.stringMatching(/^[a-z]{6}$/),
        fc.string({ minLength: 12, maxLength: 24 }),
        (rawDesired, snapshot, tag, cleartext) => {
          const desired = withSecrets(rawDesired, tag);
          const sources = Object.fromEntries(
            desired.roles.flatMap((r, i) =>
              r.password ? [[r.name, `SEC${tag}${i}:password:${i + 1}`]] : [],
            ),
          );
          const plan = computePlan({
            desired,
            snapshot,
            mode: desired.reconciliation_mode,
            passwordSources: sources,
            appliedPasswordSourceVersions: {},
            allowSchemaOwnerTransfers: true,
          });
          const verifier = scramSha256Verifier(cleartext, randomBytes(16));
          const url = `postgres://rolepolicy:${cleartext}@db.internal:5432/app`;
          const artifact = buildReviewArtifact({
            toolVersion: '0.1.0',
            capturedAt: '2026-11-25T12:00:00Z',
            contentDigest: `sha256:${'0'.repeat(64)}`,
            targetLabel: 'db.internal:5432/app',
            document: 'policy.yaml',
            mode: desired.reconciliation_mode,
            desired,
            scope: deriveManagedScope(desired),
            snapshot,
            plan,
            facts: null,
          });
          const validation = validateReviewArtifact(JSON.parse(serializeReviewArtifact(artifact)));
          expect(validation.ok ? [] : validation.errors).toEqual([]);
          const text = serializeReviewArtifact(artifact) + renderReviewHtml(artifact);
          for (const secret of [
            `CMT${tag}`,
            `CFG${tag}`,
            `SEC${tag}`,
            verifier,
            'SCRAM-SHA-256$',
            url,
            'postgres://',
          ]) {
            expect(text.includes(secret)).toBe(false);
          }
          if (cleartext.trim().length >= 12) expect(text.includes(cleartext)).toBe(false);

          // Oracle: render the plan with real verifiers and see which changes' statements carry a secret.
          const rendered = renderSql(plan.changes, {
            serverVersionNum: snapshot.server_version_num,
            inventory: snapshot.inventory,
            passwords: Object.fromEntries(Object.keys(sources).map((role) => [role, verifier])),
            executorRole: snapshot.executor.role,
          });
          const exposing = [
            ...new Set(
              rendered.statements
                .filter(
                  (s) =>
                    s.sql.includes(verifier) || s.sql.includes(`CMT${tag}`) || s.sql.includes(`CFG${tag}`),
                )
                .map((s) => s.changeIndex),
            ),
          ].sort((a, b) => a - b);
          if (exposing.length === 0) {
            expect(artifact.recorded.sql_preview).toEqual({ status: 'available', sql: rendered.redactedSql });
          } else {
            expect(artifact.recorded.sql_preview).toEqual({
              status: 'omitted',
              reason: 'sensitive_changes',
              sensitive_change_indices: exposing,
            });
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
