// Options of the execution module: subjects (sandboxed in tests), the secret resolver and a test-only
// probe. Production uses the spine subjects and the gateway resolver.
import type { ExecutableStatement } from '@rolepolicy/catalog';
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
  readonly secrets: ExecutionSecretResolver;
  readonly probe?: LockHolderProbe;
}

/** Injection token of the resolved {@link ExecutionOptions}. */
export const EXECUTION_OPTIONS = Symbol('rp.executor.options');
