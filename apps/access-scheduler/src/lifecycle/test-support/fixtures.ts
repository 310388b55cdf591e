// Objects for the access-scheduler's pure tests: a target PostgresPolicy, an access policy, a request,
// scoped plans, and a clock. Names follow the spec's examples.
import type {
  EphemeralAccessPolicy,
  EphemeralAccessRequest,
  EphemeralAccessRequestStatus,
  PostgresPolicy,
  PostgresPolicyPlan,
} from '@rolepolicy/kube';
import { logicalFingerprint, type ScopeOperation } from '@rolepolicy/policy';
import type { ClusterLimits } from '../access-policy.js';
import { planNameOf, scopedPlanObject } from '../scoped-plan.js';
import { targetView, type TargetView } from '../target.js';

export const T0 = Date.UTC(2026, 10, 25, 12, 0, 0);
export const LIMITS: ClusterLimits = { maximumDurationSeconds: 24 * 3600, maxPendingTtlSeconds: 3600 };
export const FINGERPRINT = logicalFingerprint('db.example', 5432, 'app');

export function targetPolicy(spec: Partial<PostgresPolicy['spec']> = {}, generation = 3): PostgresPolicy {
  return {
    apiVersion: 'rolepolicy.io/v1alpha1',
    kind: 'PostgresPolicy',
    metadata: {
      name: 'orders',
      namespace: 'team-a',
      uid: 'uid-orders',
      generation,
      finalizers: ['rolepolicy.io/ephemeral-access-target'],
    },
    spec: {
      connection: { secretRef: { name: 'db' } },
      mode: 'apply',
      approval: 'auto',
      roles: [
        { name: 'reader', login: false },
        { name: 'writer', login: false },
        { name: 'alice', login: true },
        { name: 'platform', external: true },
      ],
      ...spec,
    } as PostgresPolicy['spec'],
    status: { managed_database_identity: 'team-a/db.example:5432/app' } as PostgresPolicy['status'],
  };
}

export function target(spec: Partial<PostgresPolicy['spec']> = {}): TargetView {
  return targetView(targetPolicy(spec));
}

export function accessPolicy(
  spec: Partial<EphemeralAccessPolicy['spec']> = {},
  generation = 1,
): EphemeralAccessPolicy {
  return {
    apiVersion: 'rolepolicy.io/v1alpha1',
    kind: 'EphemeralAccessPolicy',
    metadata: { name: 'orders-read', namespace: 'team-a', uid: 'uid-eap', generation },
    spec: {
      approval: { mode: 'Automatic' },
      justification: { required: false },
      maximumDuration: '2h',
      defaultDuration: '30m',
      memberships: [{ role: 'reader', inherit: true }],
      postgresPolicyRef: { name: 'orders' },
      ...spec,
    },
  };
}

export function request(
  status?: EphemeralAccessRequestStatus,
  spec: Partial<EphemeralAccessRequest['spec']> = {},
  meta: Partial<EphemeralAccessRequest['metadata']> = {},
): EphemeralAccessRequest {
  return {
    apiVersion: 'rolepolicy.io/v1alpha1',
    kind: 'EphemeralAccessRequest',
    metadata: {
      name: 'alice-read',
      namespace: 'team-a',
      uid: '1a2b3c4d-0000-0000-0000-000000000000',
      generation: 1,
      finalizers: ['rolepolicy.io/ephemeral-access'],
      ...meta,
    },
    spec: {
      accessPolicyRef: { name: 'orders-read' },
      subject: { role: 'alice' },
      requestedBy: { username: 'alice@example.com' },
      ...spec,
    },
    ...(status ? { status } : {}),
  };
}

/** A scoped plan of the request in a phase, as the API would hold it. */
export function plan(
  req: EphemeralAccessRequest,
  operation: ScopeOperation,
  phase: 'Applying' | 'Applied' | 'Failed',
  lastError?: string,
): PostgresPolicyPlan {
  const built = scopedPlanObject(
    req,
    req.status!.resolvedAccess!,
    target(),
    operation,
    '2026-11-25T12:00:00Z',
  );
  const object = built.object as unknown as PostgresPolicyPlan;
  return {
    ...object,
    metadata: { ...object.metadata, name: planNameOf(req, operation) },
    status: { phase, ...(lastError ? { lastError } : {}) } as PostgresPolicyPlan['status'],
  };
}
