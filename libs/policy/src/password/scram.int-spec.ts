// The server itself computes a verifier (random salt); ours, given the same salt and iterations, must be identical.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { parseScramVerifier, scramSha256Verifier } from './scram.js';

// Random, not the pid: roles are cluster-global and a killed run's leftovers must never collide.
const RUN = randomBytes(5).toString('hex');
const DB = `rp_scram_${RUN}`;
const ROLE_PREFIX = `rp_scram_${RUN}_`;
const admin = (database = 'postgres'): pg.Client =>
  new pg.Client({ host: '127.0.0.1', port: 5432, user: 'postgres', database });

describe('scramSha256Verifier against PostgreSQL', () => {
  let client: pg.Client;
  const roles: string[] = [];

  beforeAll(async () => {
    const root = admin();
    await root.connect();
    await root.query(`DROP DATABASE IF EXISTS "${DB}"`);
    await root.query(`CREATE DATABASE "${DB}"`);
    await root.end();
    client = admin(DB);
    await client.connect();
    await client.query(`SET password_encryption = 'scram-sha-256'`);
  });

  afterAll(async () => {
    for (const role of roles) await client.query(`DROP ROLE IF EXISTS "${role}"`);
    await client.end();
    const root = admin();
    await root.connect();
    await root.query(`DROP DATABASE IF EXISTS "${DB}"`);
    await root.end();
  });

  async function serverVerifier(role: string, password: string): Promise<string> {
    roles.push(role);
    const literal = `'${password.replaceAll("'", "''")}'`;
    await client.query(`CREATE ROLE "${role}" LOGIN PASSWORD ${literal}`);
    const result = await client.query<{ rolpassword: string }>(
      'SELECT rolpassword FROM pg_authid WHERE rolname = $1',
      [role],
    );
    return result.rows[0]!.rolpassword;
  }

  it.each([
    ['ascii', 'correct horse battery staple'],
    ['quotes and backslashes', `it's a \\ "test"`],
    ['non-ASCII', 'pässwörd-\u{1F511}'],
    // SASLprep cases: the server normalises these before hashing, so must we.
    ['ligature (NFKC)', 'of\uFB01ce'],
    ['roman numeral (NFKC)', 'nine\u2168'],
    ['no-break space', 'a\u00A0b'],
    ['soft hyphen (mapped to nothing)', 'x\u00ADy'],
    ['zero-width space', 'I\u200BX'],
    ['only mapped-to-nothing', '\u00AD'],
    ['private use (prohibited: raw)', '\uE000pw'],
    ['unassigned in Unicode 3.2 (raw)', 'pw\u{1F600}\uFB01'],
    ['mixed bidi (raw)', '\u0627\u0628c'],
    ['right-to-left', '\u0627\u0628\u062A'],
    ['ASCII control (raw)', 'bell\u0007'],
  ])('equals the verifier the server computes for a %s password', async (label, password) => {
    const stored = await serverVerifier(`${ROLE_PREFIX}${label.replace(/\W/g, '_')}`, password);
    const parsed = parseScramVerifier(stored);
    expect(parsed).not.toBeNull();
    expect(scramSha256Verifier(password, parsed!.salt, parsed!.iterations)).toBe(stored);
  });

  it('a verifier we compute is stored verbatim by ALTER ROLE ... PASSWORD', async () => {
    const role = `${ROLE_PREFIX}verbatim`;
    await serverVerifier(role, 'first');
    const ours = scramSha256Verifier('second', Buffer.alloc(16, 9));
    await client.query(`ALTER ROLE "${role}" PASSWORD '${ours}'`);
    const result = await client.query<{ rolpassword: string }>(
      'SELECT rolpassword FROM pg_authid WHERE rolname = $1',
      [role],
    );
    expect(result.rows[0]!.rolpassword).toBe(ours);
  });
});
