// Target identity verdict at execution (spec decision rule 6; docs/executor.md, "Decision"): is the database the
// executor reaches now the one the plan was approved for? Pure; shared by the planner and the executor.

/** A target identity as read at compute time (from the plan) or now (from a fresh inspection). */
export interface TargetIdentityReading {
  /** `pg_control_system().system_identifier`, or null when it could not be read. */
  readonly physical: string | null;
  /** `sha256:` fingerprint of host, port and database, or null when unknown. */
  readonly logical: string | null;
}

/** Outcome of comparing the approved target with the observed one (spec decision rule 6; docs/executor.md, "Decision"). */
export type IdentityVerdict =
  | { readonly kind: 'proceed' }
  | {
      readonly kind: 'fail_closed';
      readonly reason: 'PhysicalIdentityRequired' | 'TargetIdentityUnavailable';
      readonly message: string;
    }
  | {
      readonly kind: 'superseded';
      readonly reason: 'TargetChanged' | 'TargetIdentityAppeared';
      readonly message: string;
    };

/** Inputs of {@link identityVerdict}. */
export interface IdentityVerdictInput {
  /** `spec.connection.requirePhysicalIdentity` of the owning policy. */
  readonly requirePhysicalIdentity: boolean;
  /** What the plan recorded (`targetPhysicalIdentity`, `targetLogicalFingerprint`). */
  readonly approved: TargetIdentityReading;
  /** What the executor reads now, under the lock. */
  readonly observed: TargetIdentityReading;
}

/**
 * Decides whether execution may touch the target:
 * 1. `requirePhysicalIdentity` and either side lacks the physical identity -> fail closed (PhysicalIdentityRequired);
 * 2. per half, physical first: both present and different -> superseded (TargetChanged);
 *    recorded but unreadable now -> fail closed (TargetIdentityUnavailable; a revoked EXECUTE on
 *    pg_control_system must never weaken an approval); absent then, present now -> superseded
 *    (TargetIdentityAppeared: re-review once);
 * 3. otherwise proceed.
 */
export function identityVerdict(input: IdentityVerdictInput): IdentityVerdict {
  const { approved, observed } = input;
  if (input.requirePhysicalIdentity && (approved.physical === null || observed.physical === null)) {
    return {
      kind: 'fail_closed',
      reason: 'PhysicalIdentityRequired',
      message:
        'requirePhysicalIdentity is set and the target physical identity (system_identifier) is not readable',
    };
  }
  const halves: readonly ['physical identity' | 'logical fingerprint', string | null, string | null][] = [
    ['physical identity', approved.physical, observed.physical],
    ['logical fingerprint', approved.logical, observed.logical],
  ];
  for (const [label, was, now] of halves) {
    if (was !== null && now !== null && was !== now) {
      return {
        kind: 'superseded',
        reason: 'TargetChanged',
        message: `target ${label} changed since the plan was computed`,
      };
    }
    if (was !== null && now === null) {
      return {
        kind: 'fail_closed',
        reason: 'TargetIdentityUnavailable',
        message: `the plan recorded the target ${label} and it cannot be read now`,
      };
    }
    if (was === null && now !== null) {
      return {
        kind: 'superseded',
        reason: 'TargetIdentityAppeared',
        message: `the target ${label} was not readable when the plan was computed and is now`,
      };
    }
  }
  return { kind: 'proceed' };
}
