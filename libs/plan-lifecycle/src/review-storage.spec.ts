// Review ConfigMap of a plan: plain JSON up to the threshold, gzip above it, nothing when even gzip is too
// large; named from the plan, labelled, and owned by the plan once its uid is known.
import { gunzipSync, gzipSync } from 'node:zlib';
import { buildPlan } from './plan-builder.js';
import {
  REVIEW_CONFIGMAP_ANNOTATION,
  buildReviewConfigMap,
  ownedByPlan,
  reviewConfigMapName,
  withReviewAnnotation,
} from './review-storage.js';
import { gzipFitting } from './sql-storage.js';
import { at, computed, policy } from './test-support/fixtures.js';

describe('review ConfigMap of a plan', () => {
  const { plan } = buildPlan({
    policy: policy(),
    computed: computed('A'),
    existingPlanNames: [],
    now: at(0),
    autoApprove: false,
  });
  const limits = { inlineMaxBytes: 64, configMapMaxGzipBytes: 200 };

  it('stores a small artifact as plain JSON under review.json', () => {
    const cm = buildReviewConfigMap(plan, '{"a":1}', limits)!;
    expect(cm.metadata.name).toBe(`${plan.metadata.name}-review`);
    expect(cm.data).toEqual({ 'review.json': '{"a":1}' });
    expect(cm.binaryData).toBeUndefined();
    expect(cm.metadata.labels?.['rolepolicy.io/review-artifact']).toBe('v2');
  });

  it('gzips an artifact above the threshold, and gives up when even gzip exceeds the limit', () => {
    const json = JSON.stringify({ text: 'x'.repeat(500) });
    const cm = buildReviewConfigMap(plan, json, limits)!;
    expect(cm.data).toBeUndefined();
    expect(gunzipSync(Buffer.from(cm.binaryData!['review.json.gz']!, 'base64')).toString('utf8')).toBe(json);
    expect(cm.metadata.annotations?.['rolepolicy.io/compression']).toBe('gzip');
    const random = JSON.stringify({
      text: Buffer.from(Array.from({ length: 600 }, (_, i) => (i * 7919) % 251)).toString('base64'),
    });
    expect(buildReviewConfigMap(plan, random, limits)).toBeNull();
  });

  it('points the plan at the ConfigMap and makes the plan its owner', () => {
    const annotated = withReviewAnnotation(plan, reviewConfigMapName(plan.metadata.name));
    expect(annotated.metadata.annotations?.[REVIEW_CONFIGMAP_ANNOTATION]).toBe(
      `${plan.metadata.name}-review`,
    );
    expect(annotated.status).toEqual(plan.status);
    const cm = ownedByPlan(buildReviewConfigMap(plan, '{}', limits)!, {
      name: plan.metadata.name,
      uid: 'u-1',
    });
    expect(cm.metadata.ownerReferences).toEqual([
      expect.objectContaining({
        kind: 'PostgresPolicyPlan',
        name: plan.metadata.name,
        uid: 'u-1',
        controller: true,
      }),
    ]);
  });
});

describe('gzip that fits', () => {
  // Review JSON's shape: many similar objects (level 9 finds more of the repeats than level 4).
  const json = Buffer.from(
    JSON.stringify(
      Array.from({ length: 2_000 }, (_, i) => ({ role: `app_${i % 37}`, schema: `s${i % 11}`, n: i })),
    ),
  );
  const fast = gzipSync(json, { level: 4 }).length;
  const best = gzipSync(json, { level: 9 }).length;

  it('uses the cheap level when its output fits, and it round-trips', () => {
    const gz = gzipFitting(json, fast);
    expect(gz.length).toBe(fast);
    expect(gunzipSync(gz).equals(json)).toBe(true);
  });

  it('falls back to the smallest output when the cheap one is over the limit', () => {
    expect(best).toBeLessThan(fast);
    const gz = gzipFitting(json, fast - 1);
    expect(gz.length).toBe(best);
    expect(gunzipSync(gz).equals(json)).toBe(true);
  });
});
