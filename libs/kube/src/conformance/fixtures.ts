// Minimal valid objects of each kind and decision fragments, the building blocks of the conformance cases.
// Kept tiny on purpose: each case adds only the fields its rule is about.
import { API_VERSION } from '../constants.js';
import type { JsonObject } from '../admission/prune-defaults.js';

/** Namespace every conformance object is created in. */
export const CONFORMANCE_NAMESPACE = 'conformance';

function resource(kind: string, name: string, spec: JsonObject): JsonObject {
  return { apiVersion: API_VERSION, kind, metadata: { name, namespace: CONFORMANCE_NAMESPACE }, spec };
}

/** A PostgresPolicy whose connection names a Secret; `spec` fields are merged over it. */
export function policy(name: string, spec: JsonObject = {}): JsonObject {
  return resource('PostgresPolicy', name, { connection: { secretRef: { name: 'app-db' } }, ...spec });
}

/** A PostgresPolicyCandidate with empty content. */
export function candidate(name: string, spec: JsonObject = {}): JsonObject {
  return resource('PostgresPolicyCandidate', name, { content: {}, policyRef: { name: 'app' }, ...spec });
}

/** A PostgresPolicyPlan as the planner creates it. */
export function plan(name: string, spec: JsonObject = {}): JsonObject {
  return resource('PostgresPolicyPlan', name, {
    managedDatabaseIdentity: 'db-7f3a',
    policyGeneration: 1,
    policyRef: { name: 'app' },
    reconciliationMode: 'authoritative',
    ...spec,
  });
}

/** An EphemeralAccessPolicy requiring approval for a one-membership bundle. */
export function accessPolicy(name: string, spec: JsonObject = {}): JsonObject {
  return resource('EphemeralAccessPolicy', name, {
    approval: { mode: 'Required' },
    justification: { required: false },
    maximumDuration: '4h',
    memberships: [{ inherit: true, role: 'app_reader' }],
    postgresPolicyRef: { name: 'app' },
    ...spec,
  });
}

/** An EphemeralAccessRequest for subject alice. */
export function request(name: string, spec: JsonObject = {}): JsonObject {
  return resource('EphemeralAccessRequest', name, {
    accessPolicyRef: { name: 'readers' },
    subject: { role: 'alice' },
    requestedBy: { username: 'alice@example.com' },
    ...spec,
  });
}

/** A reviewer identity. */
export const REVIEWER: JsonObject = { username: 'bob@example.com', uid: 'u-1', groups: ['dba'] };

/** Plan condition (snake_case timestamp field). */
export function planCondition(type: string, status: string, message = 'reviewed'): JsonObject {
  return { type, status, reason: 'Reviewed', message, last_transition_time: '2026-11-20T10:00:00Z' };
}

/** Access condition (camelCase timestamp field, bound to the bundle). */
export function accessCondition(
  type: string,
  status: string,
  lastTransitionTime = '2026-11-20T10:00:00Z',
): JsonObject {
  return {
    type,
    status,
    reason: 'Reviewed',
    lastTransitionTime,
    bundleHash: `sha256:${'b'.repeat(64)}`,
    grantedDuration: '1h',
  };
}

/** A resolvedAccess snapshot. */
export const RESOLVED_ACCESS: JsonObject = {
  accessPolicyGeneration: 1,
  accessPolicyUid: 'uid-eap',
  bundleEncoding: 'rolepolicy.io/access-bundle/v1',
  bundleHash: `sha256:${'b'.repeat(64)}`,
  grantedDuration: '1h',
  memberships: [{ inherit: true, member: 'alice', role: 'app_reader' }],
  targetDatabaseFingerprint: `sha256:${'f'.repeat(64)}`,
  targetPolicyGeneration: 3,
  targetPolicyUid: 'uid-app',
};
