// Leader election decisions over a coordination.k8s.io/v1 Lease, as pure functions of what was read.
// Expiry is judged on the local clock since the record was last seen to change (as client-go does), so
// clock skew between replicas cannot make a live leader look dead.

/** The Lease fields leader election reads and writes. */
export type LeaseRecord = {
  readonly holderIdentity: string | undefined;
  readonly leaseDurationSeconds: number | undefined;
  readonly renewTime: string | undefined;
  readonly leaseTransitions: number | undefined;
};

/** A record plus the local time at which this replica first saw it in that exact state. */
export type LeaseObservation = {
  readonly record: LeaseRecord;
  readonly observedAtMs: number;
};

/** What to do with the Lease on this tick. */
export type LeaseDecision =
  | { readonly kind: 'create' }
  | { readonly kind: 'renew' }
  | { readonly kind: 'takeover'; readonly previousHolder: string | undefined }
  | { readonly kind: 'follow'; readonly holder: string; readonly expiresAtMs: number };

/** True when two reads of the Lease are the same record (so the observation time must not move). */
export function sameRecord(a: LeaseRecord, b: LeaseRecord): boolean {
  return (
    a.holderIdentity === b.holderIdentity &&
    a.renewTime === b.renewTime &&
    a.leaseDurationSeconds === b.leaseDurationSeconds &&
    a.leaseTransitions === b.leaseTransitions
  );
}

/**
 * Decides between creating, renewing, taking over or following.
 * @param observation undefined when the Lease does not exist
 * @param defaultDurationSeconds used when the record carries no duration
 */
export function decideLease(
  observation: LeaseObservation | undefined,
  identity: string,
  nowMs: number,
  defaultDurationSeconds: number,
): LeaseDecision {
  if (observation === undefined) return { kind: 'create' };
  const { record } = observation;
  if (record.holderIdentity === identity) return { kind: 'renew' };
  if (record.holderIdentity === undefined || record.holderIdentity === '') {
    return { kind: 'takeover', previousHolder: undefined };
  }
  const duration = (record.leaseDurationSeconds ?? defaultDurationSeconds) * 1000;
  const expiresAtMs = observation.observedAtMs + duration;
  if (nowMs > expiresAtMs) return { kind: 'takeover', previousHolder: record.holderIdentity };
  return { kind: 'follow', holder: record.holderIdentity, expiresAtMs };
}

/** Lease spec fields to write for a create, renew or takeover decided at `nowIso`. */
export function leaseSpecFor(
  decision: Exclude<LeaseDecision, { kind: 'follow' }>,
  current: LeaseRecord | undefined,
  identity: string,
  durationSeconds: number,
): { holderIdentity: string; leaseDurationSeconds: number; leaseTransitions: number; acquire: boolean } {
  switch (decision.kind) {
    case 'create':
      return {
        holderIdentity: identity,
        leaseDurationSeconds: durationSeconds,
        leaseTransitions: 0,
        acquire: true,
      };
    case 'renew':
      return {
        holderIdentity: identity,
        leaseDurationSeconds: durationSeconds,
        leaseTransitions: current?.leaseTransitions ?? 0,
        acquire: false,
      };
    case 'takeover':
      return {
        holderIdentity: identity,
        leaseDurationSeconds: durationSeconds,
        leaseTransitions: (current?.leaseTransitions ?? 0) + 1,
        acquire: true,
      };
    default: {
      const never: never = decision;
      return never;
    }
  }
}
