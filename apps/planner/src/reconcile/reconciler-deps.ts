// What the planner's reconciler needs from the service, and its defaults.
import type { AppliedSnapshotMissReason } from './applied-snapshots.js';
import type { NatsConnection } from '@nats-io/transport-node';
import type { JetStreamPublisher, ResourceCache, SecretReader } from '@rolepolicy/contracts';
import type { AuditSink, LogRecord } from '@rolepolicy/runtime';
import type { CandidateSettings } from '../candidates/resources.js';
import type { DecisionAuthentication, LifecycleSettings } from '@rolepolicy/plan-lifecycle';
import type { ConvergedMemo, ConvergedMemoSettings } from './converged-memo.js';

/** What the reconciler needs from the service. */
export interface ReconcilerDeps {
  readonly cache: Pick<
    ResourceCache,
    'get' | 'list' | 'owned' | 'withUid' | 'withFields' | 'onChange' | 'sync' | 'appliedSequence'
  >;
  readonly nats: NatsConnection;
  readonly publisher: Pick<JetStreamPublisher, 'publish'>;
  /**
   * Secret values, through the k8s-gateway (never the resource stream). The planner creates no Secret: a
   * generated password's Secret is created by the executor when an approved plan runs.
   */
  readonly secrets: SecretReader;
  readonly settings: LifecycleSettings;
  readonly inspectTimeoutMs: number;
  /** Passes running at once (the rest wait their turn); unbounded when absent (tests). */
  readonly passConcurrency?: number;
  /** The inspectors' public key every request's connection is sealed to (INSPECT_SEAL_PUBLIC_KEY). */
  readonly inspectSealKey: string;
  /** Nest's Logger in the service; a `{ msg, ...fields }` record becomes a structured log line. */
  readonly log: {
    log(m: string | LogRecord): void;
    warn(m: string | LogRecord): void;
    error(m: string | LogRecord): void;
  };
  /** Candidate expiry, budget and retention (defaults: DEFAULT_CANDIDATE_SETTINGS). */
  readonly candidateSettings?: CandidateSettings;
  /** Called for each inspection made for candidates (metrics, the candidates bench). */
  readonly onCandidateInspection?: (kind: 'shared' | 'individual' | 'preview') => void;
  /** Called after each decided pass with its kind and duration (event to last command sent). */
  readonly observe?: (decision: string, seconds: number) => void;
  /**
   * Called for each pass after an Applied result: `verified` when it verified convergence from the
   * executor's post-apply snapshot instead of an inspection, else why it could not.
   */
  readonly onAppliedSnapshot?: (outcome: 'verified' | AppliedSnapshotMissReason) => void;
  /** When a converged policy's fingerprint-only pass gives way to a full one (default: every 12th, 1 h). */
  readonly convergedMemo?: ConvergedMemoSettings;
  /**
   * The replica's memo of converged policies, kept across its leader terms (the host owns it); absent: a
   * memo of this reconciler's own, built from `convergedMemo`.
   */
  readonly converged?: ConvergedMemo;
  /** Called with the store's name when an own write is dropped unseen (`rp_own_writes_expired_total`). */
  readonly onOwnWriteExpired?: (store: string) => void;
  /** Whether decisions are authenticated (ADR 0026); absent: not reported (pending plans left as they are). */
  readonly decisions?: () => DecisionAuthentication;
  /** Where plan decisions are recorded (docs/audit.md); none when absent (tests of other behaviour). */
  readonly audit?: AuditSink;
  /** The clock (epoch ms) every decision of the reconciler reads; default `Date.now`. */
  readonly now?: () => number;
}

/** Default bounds of the fingerprint path (PLANNER_FULL_INSPECTION_EVERY / _AFTER_SECONDS). */
export const DEFAULT_CONVERGED_MEMO: ConvergedMemoSettings = { fullEveryPasses: 12, fullAfterMs: 3_600_000 };
