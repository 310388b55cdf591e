// What the access-scheduler's loop needs from the service (host.ts supplies it), and its timings.
import type { JetStreamPublisher, ResourceCache, SecretReader } from '@rolepolicy/contracts';
import type { ClusterLimits } from '../lifecycle/access-policy.js';
import type { AuditRecord } from '@rolepolicy/contracts';
import type { TimerJob } from './queues.js';

/** What the loop needs. */
export interface SchedulerDeps {
  readonly cache: Pick<
    ResourceCache,
    'get' | 'list' | 'withUid' | 'withFields' | 'onChange' | 'appliedSequence'
  >;
  readonly publisher: Pick<JetStreamPublisher, 'publish'>;
  readonly secrets: SecretReader;
  readonly limits: ClusterLimits;
  /** Timer port (BullMQ in production). */
  readonly schedule: (job: TimerJob, now: number) => Promise<void>;
  readonly log: SchedulerLog;
  readonly audit: (record: AuditRecord) => void;
  readonly observeRevocationLag?: (seconds: number) => void;
  /** Time from expiresAt to the scheduler publishing the revoke (its own share of the revocation lag). */
  readonly observeRevokeDispatch?: (seconds: number) => void;
  /** How long a scoped request waits for its result before it is sent again (default 120 s). */
  readonly resendMs?: number;
  /** The clock (epoch ms) every decision of the loop reads; default `Date.now`. */
  readonly now?: () => number;
  /** Whether no admission policy authenticates decisions (ADR 0026); absent: not reported. */
  readonly decisionsUnauthenticated?: () => boolean;
  /** Called with the store's name when an own write is dropped unseen (`rp_own_writes_expired_total`). */
  readonly onOwnWriteExpired?: (store: string) => void;
}

/** The loop's log (Nest's Logger in the service). */
export interface SchedulerLog {
  log(m: string): void;
  warn(m: string): void;
  error(m: string): void;
}

/** A pass that waits on something (a plan to appear, a report) looks again after this long. */
export const RETRY_PASS_MS = 15_000;
/** Passes that run at once (each may read Secrets and send commands); the rest wait their turn. */
export const CONCURRENT_PASSES = 16;
