// What the planner asks the inspector for the review (the policy's retirements, the only roles a plan can
// drop, and the predefined roles its memberships and grants name), and the artifact it records for a plan.
import { gunzipSync } from 'node:zlib';

import {
  computePlan,
  contentDigest,
  deriveManagedScope,
  expandPolicy,
  type PolicyContent,
} from '@rolepolicy/policy';
import type { PostgresPolicy, PostgresPolicyPlan } from '@rolepolicy/plan-lifecycle';
import { buildReviewArtifact, serializeReviewArtifact, toolVersion } from '@rolepolicy/review';

import {
  REALISTIC_FACTS,
  REALISTIC_POLICY,
  realisticDesired,
  realisticSnapshot,
} from '../../../../libs/review/src/test-support/realistic.js';
import type { UnkeyedCommand } from '../planning/gateway-commands.js';
import { planPass, type PlanningInput } from '../planning/planning.js';
import { reviewQueryOf, ReviewRecorder } from './review-recording.js';

describe('reviewQueryOf', () => {
  it('asks for drop facts of retirements and for the pg_* roles the policy names', () => {
    const expanded = expandPolicy(
      {
        roles: [{ name: 'app', login: true }, { name: 'ops' }],
        memberships: [
          { role: 'pg_read_all_data', members: [{ name: 'app' }] },
          { role: 'ops', members: [{ name: 'app' }] },
        ],
        retirements: [{ role: 'legacy' }],
      } as PolicyContent,
      { policyName: 'shop' },
    );
    if (!expanded.ok) throw new Error(JSON.stringify(expanded));
    expect(reviewQueryOf(expanded.desired)).toEqual({
      dropRoles: ['legacy'],
      predefinedRoles: ['pg_read_all_data'],
    });
  });
});

describe('ReviewRecorder', () => {
  const desired = realisticDesired();
  const planning: PlanningInput = {
    namespace: 'shop',
    spec: REALISTIC_POLICY,
    desired,
    scope: deriveManagedScope(desired),
    target: 'shop/app-db/url',
    connection: { url: 'postgres://db.internal:5432/shop', setRole: null },
    passwordSources: { app: 'app-db:password:42' },
    appliedPasswordSourceVersions: { app: 'app-db:password:41' },
    allowSchemaOwnerTransfers: false,
    snapshot: realisticSnapshot(160010),
    snapshotRequestedAt: '2026-11-25T11:59:59Z',
  };
  const policy = {
    metadata: { namespace: 'shop', name: 'shop', uid: 'policy-uid', generation: 1 },
    spec: REALISTIC_POLICY,
  } as unknown as PostgresPolicy;
  const plan = {
    metadata: { namespace: 'shop', name: 'shop-7f3a2c1' },
    status: { computedAt: '2026-11-25T12:00:00Z' },
  } as unknown as PostgresPolicyPlan;

  it("records the artifact of the pass's own plan, byte for byte the one built from a fresh computation", () => {
    const sent: UnkeyedCommand[] = [];
    const warnings: string[] = [];
    const recorder = new ReviewRecorder({
      send: (command) => Promise.resolve(void sent.push(command)),
      log: { warn: (m) => void warnings.push(m) },
    });
    const pass = planPass(planning);
    if (pass.outcome.kind !== 'computed' || pass.plan === null) throw new Error('the fixture does not plan');
    recorder.noteInspection('shop/shop', {
      planning,
      facts: REALISTIC_FACTS,
      plan: pass.plan,
      contentDigest: pass.outcome.plan.contentDigest,
    });
    const annotated = recorder.recordPlan('shop/shop', policy, plan);
    const configMapName = annotated.metadata.annotations?.['rolepolicy.io/review-configmap'];
    expect(configMapName).toBe('shop-7f3a2c1-review');
    recorder.onPlan({ ...plan, metadata: { ...plan.metadata, uid: 'plan-uid' } } as never);
    expect(sent).toHaveLength(1);
    const object = (
      sent[0] as { object: { data?: Record<string, string>; binaryData?: Record<string, string> } }
    ).object;
    const stored =
      object.data?.['review.json'] ??
      gunzipSync(Buffer.from(object.binaryData!['review.json.gz']!, 'base64')).toString('utf8');

    const expected = serializeReviewArtifact(
      buildReviewArtifact({
        toolVersion: toolVersion(),
        capturedAt: '2026-11-25T12:00:00Z',
        contentDigest: contentDigest(REALISTIC_POLICY).digest,
        targetLabel: 'shop/shop',
        document: 'PostgresPolicy/shop/shop',
        mode: desired.reconciliation_mode,
        desired,
        scope: planning.scope,
        snapshot: planning.snapshot,
        plan: computePlan({
          desired,
          snapshot: planning.snapshot,
          mode: desired.reconciliation_mode,
          passwordSources: planning.passwordSources,
          appliedPasswordSourceVersions: planning.appliedPasswordSourceVersions,
          allowSchemaOwnerTransfers: false,
        }),
        facts: REALISTIC_FACTS,
      }),
    );
    expect(stored).toBe(expected);
    expect(warnings).toEqual([]);
  });

  it('records nothing for a pass whose inspection ended', () => {
    const recorder = new ReviewRecorder({ send: () => Promise.resolve(), log: { warn: () => undefined } });
    const pass = planPass(planning);
    if (pass.outcome.kind !== 'computed' || pass.plan === null) throw new Error('the fixture does not plan');
    recorder.noteInspection('shop/shop', {
      planning,
      facts: null,
      plan: pass.plan,
      contentDigest: pass.outcome.plan.contentDigest,
    });
    recorder.endPass('shop/shop');
    expect(recorder.recordPlan('shop/shop', policy, plan)).toBe(plan);
  });
});
