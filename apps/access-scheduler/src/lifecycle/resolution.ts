// Request resolution (operator notes 4.2): the checks a request must pass and the write-once snapshot
// (`resolvedAccess`) an approval binds to. Also used to re-resolve a pending request and compare. Pure.
import type { EphemeralAccessPolicy, EphemeralAccessRequest, ResolvedAccess } from '@rolepolicy/kube';
import {
  BUNDLE_ENCODING,
  bundleHash,
  canonicalBundle,
  canonicalDuration,
  parseEphemeralDuration,
} from '@rolepolicy/policy';
import { validateAccessPolicy, type ClusterLimits } from './access-policy.js';
import { rolesOf, type TargetView } from './target.js';

/** The target database fingerprint as the adapter could read it (Secret values never reach here). */
export type FingerprintRead =
  { readonly ok: true; readonly fingerprint: string } | { readonly ok: false; readonly message: string };

/** What resolution reads besides the request. */
export interface ResolutionInput {
  readonly request: EphemeralAccessRequest;
  readonly accessPolicy: EphemeralAccessPolicy | null;
  readonly target: TargetView | null;
  readonly limits: ClusterLimits;
  /** Undefined when the adapter did not read it (the target is missing or invalid). */
  readonly fingerprint: FingerprintRead | undefined;
}

/** A resolved request: the snapshot and the terms that go with it. */
export interface Resolution {
  readonly ok: true;
  readonly resolvedAccess: ResolvedAccess;
  readonly approvalMode: 'Automatic' | 'Required';
  readonly grantedSeconds: number;
  readonly pendingTtlSeconds: number;
}

/** Why a request does not resolve now (`Resolved=False` with this reason). */
export interface Unresolved {
  readonly ok: false;
  readonly reason: 'InvalidRequest' | 'Suspended';
  readonly message: string;
}

function invalid(message: string): Unresolved {
  return { ok: false, reason: 'InvalidRequest', message };
}

/** Resolves a request against the current access policy, target and fingerprint. */
export function resolveRequest(input: ResolutionInput): Resolution | Unresolved {
  const { request, accessPolicy, target, limits } = input;
  const policyName = request.spec.accessPolicyRef.name;
  if (accessPolicy === null)
    return invalid(`EphemeralAccessPolicy ${policyName} does not exist in this namespace`);
  const verdict = validateAccessPolicy(accessPolicy, target, limits);
  if (!verdict.ok) {
    const problem = verdict.durations ?? verdict.refs!;
    return invalid(
      `EphemeralAccessPolicy ${policyName} is not accepted (${problem.reason}): ${problem.message}`,
    );
  }
  if (accessPolicy.spec.suspend === true) {
    return { ok: false, reason: 'Suspended', message: `EphemeralAccessPolicy ${policyName} is suspended` };
  }
  if (target!.suspended) {
    return { ok: false, reason: 'Suspended', message: `PostgresPolicy ${target!.name} is suspended` };
  }
  if (accessPolicy.spec.justification.required && (request.spec.justification ?? '').trim() === '') {
    return invalid(
      `spec.justification is required by EphemeralAccessPolicy ${policyName} and must not be blank`,
    );
  }
  const subject = request.spec.subject.role;
  if (!rolesOf(target!)!.has(subject)) {
    return invalid(`spec.subject.role ${subject} is not a role of PostgresPolicy ${target!.name}`);
  }
  const requested = request.spec.requestedDuration ?? accessPolicy.spec.defaultDuration ?? null;
  if (requested === null) {
    return invalid(
      `spec.requestedDuration is required because EphemeralAccessPolicy ${policyName} has no defaultDuration`,
    );
  }
  const field = request.spec.requestedDuration != null ? 'spec.requestedDuration' : 'defaultDuration';
  const duration = parseEphemeralDuration(requested);
  if (!duration.ok) return invalid(`${field} ${duration.message}`);
  if (duration.seconds > verdict.terms.maximumSeconds) {
    return invalid(
      `${field} ${duration.seconds}s exceeds the maximumDuration ${verdict.terms.maximumSeconds}s of EphemeralAccessPolicy ${policyName}`,
    );
  }
  const read = input.fingerprint;
  if (read === undefined || !read.ok) {
    return invalid(
      `the target database of PostgresPolicy ${target!.name} cannot be identified: ${read?.message ?? 'not read'}`,
    );
  }
  const memberships = canonicalBundle(
    accessPolicy.spec.memberships.map((m) => ({ role: m.role, member: subject, inherit: m.inherit })),
  );
  const resolvedAccess: ResolvedAccess = {
    accessPolicyGeneration: accessPolicy.metadata.generation ?? 0,
    accessPolicyUid: accessPolicy.metadata.uid ?? '',
    bundleEncoding: BUNDLE_ENCODING,
    bundleHash: bundleHash({ targetDatabaseFingerprint: read.fingerprint, memberships }),
    grantedDuration: canonicalDuration(duration.seconds),
    memberships,
    targetDatabaseFingerprint: read.fingerprint,
    targetPolicyGeneration: target!.generation,
    targetPolicyUid: target!.uid,
  };
  return {
    ok: true,
    resolvedAccess,
    approvalMode: accessPolicy.spec.approval.mode,
    grantedSeconds: duration.seconds,
    pendingTtlSeconds: verdict.terms.pendingTtlSeconds,
  };
}
