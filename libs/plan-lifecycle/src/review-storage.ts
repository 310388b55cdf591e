// Where a durable plan's review artifact lives: a ConfigMap named from the plan (`<plan>-review`), plain
// JSON up to 16 KiB, gzip above, referenced by the plan's `rolepolicy.io/review-configmap` annotation
// (the CRD has no status field for it) and owned by the plan. Pure: the gateway writes the ConfigMap.
import {
  REVIEW_ARTIFACT_LABEL,
  REVIEW_CONFIGMAP_ANNOTATION,
  REVIEW_GZIP_KEY,
  REVIEW_JSON_KEY,
} from '@rolepolicy/kube';

import {
  API_VERSION,
  PLAN_LABEL,
  POLICY_LABEL,
  type ConfigMap,
  type PostgresPolicyPlan,
} from './resources.js';
import { gzipFitting, sha256Hex, SQL_CONFIGMAP_MAX_GZIP_BYTES, SQL_INLINE_MAX_BYTES } from './sql-storage.js';

export { REVIEW_ARTIFACT_LABEL, REVIEW_CONFIGMAP_ANNOTATION, REVIEW_GZIP_KEY, REVIEW_JSON_KEY };

/** Plain JSON up to this many bytes (as for the SQL preview: readable with `kubectl get -o yaml`). */
export const REVIEW_INLINE_MAX_BYTES = SQL_INLINE_MAX_BYTES;
/** Above this many gzip bytes nothing is stored (a ConfigMap holds at most 1 MiB; see sql-storage.ts). */
export const REVIEW_CONFIGMAP_MAX_GZIP_BYTES = SQL_CONFIGMAP_MAX_GZIP_BYTES;

/** The review ConfigMap's name for a plan (plan names leave room for a 7-character suffix). */
export function reviewConfigMapName(planName: string): string {
  return `${planName.slice(0, 253 - '-review'.length)}-review`;
}

/** Storage limits (parameters so tests reach every branch with small artifacts). */
export interface ReviewLimits {
  readonly inlineMaxBytes: number;
  readonly configMapMaxGzipBytes: number;
}

/**
 * The review ConfigMap of `plan` holding `artifactJson`, without its ownerReference (the plan's uid is
 * known only once the API server created it), or null when even the gzip payload is too large to store.
 */
export function buildReviewConfigMap(
  plan: PostgresPolicyPlan,
  artifactJson: string,
  limits: ReviewLimits = {
    inlineMaxBytes: REVIEW_INLINE_MAX_BYTES,
    configMapMaxGzipBytes: REVIEW_CONFIGMAP_MAX_GZIP_BYTES,
  },
): ConfigMap | null {
  const bytes = Buffer.from(artifactJson, 'utf8');
  const labels = {
    ...(plan.metadata.labels?.[POLICY_LABEL] !== undefined
      ? { [POLICY_LABEL]: plan.metadata.labels[POLICY_LABEL] }
      : {}),
    [PLAN_LABEL]: sha256Hex(plan.metadata.name).slice(0, 32),
    [REVIEW_ARTIFACT_LABEL]: 'v2',
  };
  const metadata = {
    name: reviewConfigMapName(plan.metadata.name),
    namespace: plan.metadata.namespace,
    labels,
  };
  if (bytes.length <= limits.inlineMaxBytes) {
    return {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { ...metadata, annotations: { 'rolepolicy.io/compression': 'none' } },
      data: { [REVIEW_JSON_KEY]: artifactJson },
    };
  }
  const gz = gzipFitting(bytes, limits.configMapMaxGzipBytes);
  if (gz.length > limits.configMapMaxGzipBytes) return null;
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      ...metadata,
      annotations: {
        'rolepolicy.io/compression': 'gzip',
        'rolepolicy.io/review-original-bytes': String(bytes.length),
      },
    },
    binaryData: { [REVIEW_GZIP_KEY]: gz.toString('base64') },
  };
}

/** `plan` with the annotation that points at its review ConfigMap. */
export function withReviewAnnotation(plan: PostgresPolicyPlan, configMapName: string): PostgresPolicyPlan {
  return {
    ...plan,
    metadata: {
      ...plan.metadata,
      annotations: { ...plan.metadata.annotations, [REVIEW_CONFIGMAP_ANNOTATION]: configMapName },
    },
  };
}

/** The review ConfigMap owned by the created plan (deleted with it by the garbage collector). */
export function ownedByPlan(
  configMap: ConfigMap,
  plan: { readonly name: string; readonly uid: string },
): ConfigMap {
  return {
    ...configMap,
    metadata: {
      ...configMap.metadata,
      ownerReferences: [
        {
          apiVersion: API_VERSION,
          kind: 'PostgresPolicyPlan',
          name: plan.name,
          uid: plan.uid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
  };
}
