// Serialises tests that change cluster-global state (e.g. every member of a pg_* role) across test
// processes sharing one server: a session advisory lock in the admin database, held while `run` runs.
import { postgresAdminUrl } from '@rolepolicy/testing';
import pg from 'pg';

/**
 * Runs `run` while holding the cluster-wide test lock `name` (other processes asking for it wait).
 * @example await withClusterLock('pg_monitor members', async () => { ... });
 */
export async function withClusterLock<T>(name: string, run: () => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: await postgresAdminUrl() });
  await client.connect();
  const key = `rolepolicy-test:${name}`;
  try {
    await client.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', [key]);
    return await run();
  } finally {
    // Ending the session releases the lock even when the unlock below is never reached.
    await client.query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [key]).catch(() => undefined);
    await client.end();
  }
}
