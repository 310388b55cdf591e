// Options of the execution module: subjects (sandboxed in tests), the secret resolver and a test-only
// probe. Production uses the spine subjects and the gateway resolver.
import type { ExecutableStatement, WorkloadIdentity } from '@rolepolicy/catalog';
import type { ExecuteRequestV2 } from '@rolepolicy/contracts';
import type { ExecutionSecretResolver } from './secrets.js';

/**
 * Test seam: statements run inside the plan's transaction around the rendered ones, so a test can log
 * who held the database lock and when (the lock-holder log). Never set in production.
 */
export interface LockHolderProbe {
  around(request: ExecuteRequestV2): {
    readonly before: readonly ExecutableStatement[];
    readonly after: readonly ExecutableStatement[];
  };
}

/** What {@link ExecutionModule.register} takes. */
export interface ExecutionOptions {
  /** Work subject (default `rp.execute.request`). */
  readonly requestSubject?: string;
  /** Result subject (default `rp.execute.result`). */
  readonly resultSubject?: string;
  /** Scoped (ephemeral access) work subject (default `rp.execute.scoped.request`). */
  readonly scopedRequestSubject?: string;
  /** Scoped revocations' own work subject (default `rp.execute.scoped.revoke`, ADR 0013). */
  readonly scopedRevokeSubject?: string;
  /** Scoped result subject (default `rp.execute.scoped.result`). */
  readonly scopedResultSubject?: string;
  /**
   * A fixed resolver (tests, demo) that trusts the request: no fresh plan or policy read, no plan status
   * written. Ignored when `cluster` is set.
   */
  readonly secrets?: ExecutionSecretResolver;
  /**
   * Production: read Secrets, the plan and the policy fresh from the gateway's resource events (a
   * ResourceCache on RP_RESOURCES), judge the fresh plan under the lock, and write plan status through
   * `rp.k8s.cmd.executor.patch-status`. Sandboxes override the subject root (resources and commands) and stream.
   */
  readonly cluster?: ClusterOptions;
  readonly probe?: LockHolderProbe;
  /**
   * Token provider for connections with `params.auth`. Unset: built from the service configuration
   * (CLOUD_IDENTITY_PROVIDER); null: such connections are refused.
   */
  readonly identity?: WorkloadIdentity | null;
  /**
   * The database of each target server the role lock is held in (ADR 0027; default `postgres`). null: no
   * role lock (role DDL of two databases of one server may collide and is redelivered).
   */
  readonly roleLockDatabase?: string | null;
}

/** Where the cluster's objects and commands live (defaults: subject root `rp`, stream `RP_RESOURCES`). */
export interface ClusterOptions {
  readonly subjectRoot?: string;
  readonly resourceStream?: string;
  /**
   * How long a request waits for its plan to become visible with a decision before it is retried by
   * redelivery (default 5000 ms); the planner may send it before the gateway published the plan.
   */
  readonly visibilityWaitMs?: number;
  /**
   * How long a request that says what its sender's cache had seen (`resourceSequences`: the planner's, or the
   * access-scheduler's for a scoped one) waits for this replica's cache to apply as much before it asks the
   * server instead (`sync()`; default
   * {@link DEFAULT_SEQUENCE_WAIT_MS}). The events are stored already: only this cache's own lag is waited for.
   */
  readonly sequenceWaitMs?: number;
}

/** Default of {@link ClusterOptions.sequenceWaitMs}. */
export const DEFAULT_SEQUENCE_WAIT_MS = 10_000;

/** Injection token of the executor's database TLS settings (DATABASE_TLS_CA_FILE). */
export const DATABASE_TLS = Symbol('rp.executor.database-tls');

/** Injection token of the executor's WorkloadIdentity (or null). */
export const WORKLOAD_IDENTITY = Symbol('rp.executor.workload-identity');

/** Injection token of the resolved {@link ExecutionOptions}. */
export const EXECUTION_OPTIONS = Symbol('rp.executor.options');
