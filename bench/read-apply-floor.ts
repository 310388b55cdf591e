// The fleet's second floor: the least PostgreSQL work a controller that reads before it writes does for one
// policy, with nothing else around it. Per database, in the product's order: a session that inspects the
// managed scope (the planner's read), then a session that takes the advisory lock, inspects again and runs
// the plan's SQL in one transaction (the executor's). No API, no NATS, no planning: libs/catalog straight on
// the database from this process, with the same concurrency as the product stage it stands beside. The gap
// between this floor and psql's is what reading costs; the gap between the product and this floor is the
// control plane (API server, gateway, NATS, planner, executors).
import { executeUnderLock, inspect, openConnection } from '@rolepolicy/catalog';
import type { ManagedScope } from '@rolepolicy/policy';

/** One database's share of the floor. */
export interface ReadApplyJob {
  readonly url: string;
  readonly scope: ManagedScope;
  /**
   * The plan's SQL as one script, one statement a line end (`;\n`, as the renderer writes the fleet fixture,
   * whose literals hold no line break); run statement by statement in the lock's transaction, as the executor
   * does since every query carries exactly one statement (ADR 0023).
   */
  readonly sql: string;
}

async function readThenApply(job: ReadApplyJob): Promise<void> {
  const planner = openConnection({ url: job.url, maxConnections: 1 });
  try {
    await inspect(planner.db, job.scope, planner.target);
  } finally {
    await planner.close();
  }
  const executor = openConnection({ url: job.url, maxConnections: 1 });
  try {
    await executeUnderLock(executor.db, async (session) => {
      await inspect(session, job.scope, executor.target);
      const statements = job.sql
        .split(';\n')
        .map((text) => text.trim())
        .filter((text) => text !== '')
        .map((text) => (text.endsWith(';') ? text : `${text};`))
        .map((text) => ({ sql: text, redacted: text }));
      return { run: true, statements, result: undefined };
    });
  } finally {
    await executor.close();
  }
}

/** Seconds to run every job, `concurrency` at a time. */
export async function readApplyFloor(jobs: readonly ReadApplyJob[], concurrency: number): Promise<number> {
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < jobs.length) await readThenApply(jobs[next++]!);
    }),
  );
  return (performance.now() - started) / 1000;
}
