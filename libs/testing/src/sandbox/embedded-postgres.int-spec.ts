// The embedded servers of the test matrix: the pinned package of a major starts, answers with that major,
// is reused by later callers of the same process, and stands in for an absent system server.
import pg from 'pg';
import { embeddedPostgres } from './embedded-postgres.js';
import { freePort } from './nats-server.js';
import { createPostgresSandbox, FALLBACK_POSTGRES_MAJOR, postgresAdminUrl } from './postgres.js';

async function versionNum(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ v: string }>("SELECT current_setting('server_version_num') AS v");
    return Number(rows[0]!.v);
  } finally {
    await client.end();
  }
}

describe('embedded PostgreSQL', () => {
  it('PG_MAJORS=18 gives a sandbox on a real PostgreSQL 18, started once per process', async () => {
    const sandbox = await createPostgresSandbox('embedded', 18);
    try {
      expect(Math.floor(sandbox.serverVersionNum / 10000)).toBe(18);
      expect(Math.floor((await versionNum(sandbox.url)) / 10000)).toBe(18);
      const again = await embeddedPostgres(18);
      expect(again.adminUrl).toBe(sandbox.adminUrl);
    } finally {
      await sandbox.drop();
    }
  }, 90_000);

  it('an absent system server is replaced by the embedded fallback major', async () => {
    const saved = process.env['RP_TEST_PG_URL'];
    process.env['RP_TEST_PG_URL'] = `postgres://postgres@127.0.0.1:${await freePort()}/postgres`;
    try {
      const url = await postgresAdminUrl('system');
      expect(url).toBe((await embeddedPostgres(FALLBACK_POSTGRES_MAJOR)).adminUrl);
      expect(Math.floor((await versionNum(url)) / 10000)).toBe(FALLBACK_POSTGRES_MAJOR);
    } finally {
      if (saved === undefined) delete process.env['RP_TEST_PG_URL'];
      else process.env['RP_TEST_PG_URL'] = saved;
    }
  }, 90_000);
});
