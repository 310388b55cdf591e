// Environment variables of the planner, validated at start (see README "Configuration").
// Shared ones come from baseEnvSpec; the planner's own are lifecycle thresholds and timeouts.
import { x25519PublicKey } from '@rolepolicy/contracts';
import { baseEnvSpec, DEFAULT_HTTP_PORTS, env, type ConfigOf, type EnvVar } from '@rolepolicy/runtime';

/** The inspectors' public key: every inspect request's connection is sealed to it (ADR 0024). Required. */
function sealPublicKey(): EnvVar<string> {
  return {
    doc: "Inspectors' public key (base64 SPKI DER, X25519) each inspect request's connection is sealed to (the inspectors hold INSPECT_SEAL_PRIVATE_KEY)",
    parse: (raw) => {
      try {
        x25519PublicKey(raw.trim());
        return { ok: true, value: raw.trim() };
      } catch {
        return { ok: false, error: 'must be an X25519 public key (SPKI DER, base64)' };
      }
    },
  };
}

/** Every variable the planner reads. */
export const plannerEnvSpec = {
  ...baseEnvSpec(DEFAULT_HTTP_PORTS['planner']),
  PLANNER_RETAIN_APPLIED: env.positiveInt('Applied plans kept per policy (older ones are deleted)', 25),
  PLANNER_RETAIN_DECIDED: env.positiveInt('Failed plus Rejected plans kept per policy', 10),
  PLANNER_RETAIN_SUPERSEDED: env.positiveInt('Superseded plans kept per policy', 3),
  PLANNER_RETAIN_MIN_AGE_SECONDS: env.positiveInt(
    'A terminal plan is deleted by retention only this long after it ended',
    300,
  ),
  PLANNER_FAILED_RETRY_WINDOW_SECONDS: env.positiveInt(
    'A plan with the same effects that failed less than this long ago is not re-planned',
    120,
  ),
  PLANNER_STUCK_APPLYING_SECONDS: env.positiveInt(
    'An Applying plan without an executor report for this long is marked Failed',
    600,
  ),
  PLANNER_CANDIDATE_TTL_SECONDS: env.positiveInt(
    'An open PostgresPolicyCandidate older than this is superseded (reason Expired)',
    14 * 24 * 3600,
  ),
  PLANNER_CANDIDATE_BUDGET: env.positiveInt(
    'Open candidates per policy that are planned; newer ones wait (CandidateBudgetExceeded)',
    32,
  ),
  PLANNER_CANDIDATE_RETAIN_TERMINAL: env.positiveInt(
    'Promoted or Superseded candidates kept per policy (older ones are deleted with their plans)',
    10,
  ),
  PLANNER_FULL_INSPECTION_EVERY: env.positiveInt(
    'A converged policy is confirmed by catalog fingerprint; every Nth pass in a row reads and diffs in full (1: always full)',
    12,
  ),
  PLANNER_FULL_INSPECTION_AFTER_SECONDS: env.positiveInt(
    'A converged policy whose last full inspection is older than this is read and diffed in full',
    3600,
  ),
  PLANNER_CONCURRENCY: env.intInRange(
    'Reconcile passes one planner runs at once, and execution results it handles at once; the others wait their turn (a burst of events must not starve the lease renewal)',
    1,
    256,
    16,
  ),
  PLANNER_INSPECT_TIMEOUT_MS: env.positiveInt('How long the planner waits for an inspector reply', 60_000),
  INSPECT_SEAL_PUBLIC_KEY: sealPublicKey(),
  PLANNER_LEASE_DURATION_MS: env.positiveInt(
    'How long the leader may go without renewing its lease (rp-leaders KV) before a standby takes over',
    15_000,
  ),
  PLANNER_LEASE_RENEW_DEADLINE_MS: env.positiveInt(
    'A leader that could not renew for this long stops sending (must be below PLANNER_LEASE_DURATION_MS)',
    10_000,
  ),
  PLANNER_LEASE_RETRY_MS: env.positiveInt(
    'How often the leader renews and a standby checks the lease (must be below the renew deadline)',
    2_000,
  ),
  PLANNER_IDENTITY: env.text(
    'Identity written to the lease; empty uses hostname, process id and a random suffix',
    '',
    253,
  ),
} as const;

/** The planner's validated configuration. */
export type PlannerConfig = ConfigOf<typeof plannerEnvSpec>;
