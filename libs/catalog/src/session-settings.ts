// The session settings SQL rendering and catalog reads depend on, pinned on every connection the product
// opens: sent in the startup packet (they outrank ALTER DATABASE/ROLE ... SET) and read back before first use.

import pg from 'pg';

import { DatabaseError } from './redaction.js';

/** One setting the product pins, and why a database owner must not choose it. */
export interface PinnedSetting {
  readonly name: string;
  /** The value sent; `current_setting(name)` must read back exactly this. */
  readonly value: string;
  readonly why: string;
}

/**
 * Every setting here exists on PostgreSQL 14 to 18 and can be set by a database owner (`ALTER DATABASE ...
 * SET`) or for the executor role (`ALTER ROLE ... [IN DATABASE ...] SET`); ADR 0023 lists what was left out.
 */
export const PINNED_SETTINGS: readonly PinnedSetting[] = [
  {
    name: 'standard_conforming_strings',
    value: 'on',
    why: 'literals are quoted for it; off makes a backslash end a literal early',
  },
  {
    name: 'search_path',
    value: 'pg_catalog,pg_temp',
    why: 'functions, operators, types and catalog names resolve to the built-in ones, never to look-alikes',
  },
  { name: 'role', value: 'none', why: 'statements run as the connecting role, not one the database chose' },
  { name: 'client_encoding', value: 'UTF8', why: 'the text the server reads is the UTF-8 text sent' },
  {
    name: 'default_transaction_read_only',
    value: 'off',
    why: 'a read-only default would refuse every plan, revocations included',
  },
  {
    name: 'default_transaction_isolation',
    value: 'read committed',
    why: "the plan's transaction runs as tested; a stricter default only adds serialization failures",
  },
  { name: 'exit_on_error', value: 'off', why: 'an expected error (a savepoint) must not end the session' },
  { name: 'idle_session_timeout', value: '0', why: 'the advisory lock is held by an idle session' },
  {
    name: 'idle_in_transaction_session_timeout',
    value: '0',
    why: 'a plan runs statement by statement in one transaction',
  },
  { name: 'array_nulls', value: 'on', why: 'array parameters carry NULL elements' },
  { name: 'quote_all_identifiers', value: 'off', why: 'function signatures are read deparsed' },
  { name: 'transform_null_equals', value: 'off', why: '`x = NULL` keeps its standard meaning' },
  {
    name: 'local_preload_libraries',
    value: '',
    why: 'no library the database chose is loaded into the session (or makes it fail)',
  },
  {
    name: 'jit',
    value: 'off',
    why: 'catalog reads are short: compiling them cost more than running them (the fingerprint at 10,000 relations took twice as long)',
  },
];

/**
 * Settings that only some majors have: set on the session after connect when the server knows them, then
 * read back like the others. `createrole_self_grant` (16+) would make every CREATE ROLE of a non-superuser
 * executor also grant the new role to the executor.
 */
export const PINNED_IF_PRESENT: readonly PinnedSetting[] = [
  {
    name: 'createrole_self_grant',
    value: '',
    why: 'CREATE ROLE grants nothing besides what the plan says',
  },
];

/** The SQLSTATE of a refused session: object_not_in_prerequisite_state (permanent until settings change). */
export const SESSION_SETTINGS_REFUSED = '55000';

// The server splits `options` on whitespace; a backslash keeps the next character (space or backslash).
function escapeOption(text: string): string {
  return text.replace(/[\\\s]/g, (char) => `\\${char}`);
}

/** The startup packet's `options`: `-c name=value` per pinned setting. */
export function startupOptions(): string {
  return PINNED_SETTINGS.map(({ name, value }) => `-c ${name}=${escapeOption(value)}`).join(' ');
}

/**
 * A connection URL whose `options` ends with ours. node-postgres lets a URL's own `options` replace the
 * configured one, so ours are appended to it: the server applies them in order and the last one wins.
 */
export function urlWithStartupOptions(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    // openConnection reports an unparsable URL itself (targetOfUrl), without echoing it.
    return url;
  }
  const own = parsed.searchParams.get('options');
  parsed.searchParams.set(
    'options',
    own === null || own.trim() === '' ? startupOptions() : `${own} ${startupOptions()}`,
  );
  return parsed.toString();
}

/**
 * Runs one statement on the session being set up. pinSessionSettings only passes statements whose meaning
 * no setting can change: qualified names, parameters instead of literals, no operator.
 */
interface Runner {
  run(text: string, parameters: readonly unknown[]): Promise<readonly Record<string, unknown>[]>;
}

const ALL = [...PINNED_SETTINGS, ...PINNED_IF_PRESENT];

/**
 * Sets what only some majors know, then reads every pinned setting back; any difference refuses the session
 * (a pooler that dropped `options`, a server that ignored one), so nothing of the product ever runs on a
 * session whose settings the database chose.
 */
export async function pinSessionSettings(session: Runner): Promise<void> {
  const names = ALL.map((setting) => setting.name);
  // current_setting(name, true) is NULL for a setting the server does not know.
  const read = () =>
    session.run(
      'SELECT s.name, pg_catalog.current_setting(s.name, true) AS value FROM pg_catalog.unnest($1::pg_catalog.text[]) AS s(name)',
      [names],
    );
  let rows = await read();
  const valueOf = (name: string) => rows.find((row) => row['name'] === name)?.['value'] ?? null;
  const unset = PINNED_IF_PRESENT.filter(
    ({ name, value }) => valueOf(name) !== null && valueOf(name) !== value,
  );
  if (unset.length > 0) {
    for (const { name, value } of unset) {
      await session.run('SELECT pg_catalog.set_config($1, $2, false)', [name, value]);
    }
    rows = await read();
  }
  const wrong = ALL.filter(({ name, value }) => {
    const actual = valueOf(name);
    return PINNED_IF_PRESENT.some((setting) => setting.name === name)
      ? actual !== null && actual !== value
      : actual !== value;
  });
  if (wrong.length > 0) {
    const list = wrong.map(
      ({ name, value }) => `${name} is ${JSON.stringify(valueOf(name))}, not ${JSON.stringify(value)}`,
    );
    throw new DatabaseError(
      `the session did not take the settings rolepolicy pins (${list.join('; ')}): ` +
        'a connection pooler may have dropped the startup options; connect to PostgreSQL directly',
      SESSION_SETTINGS_REFUSED,
    );
  }
}

// The query config node-postgres reads; its types do not list queryMode.
type ExtendedQuery = pg.QueryConfig & { readonly queryMode: 'extended' };

/**
 * Makes every text query of `client` go as its own Parse/Bind/Execute (the extended protocol) even without
 * parameters: the server then runs exactly one statement per query and refuses a string holding several,
 * so text that a literal ended early cannot carry a second statement.
 */
export function oneStatementPerQuery(client: pg.PoolClient): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  const patched = (...args: unknown[]): unknown => {
    const [text, values] = args;
    if (typeof text === 'string' && args.length <= 2 && (values === undefined || Array.isArray(values))) {
      const config: ExtendedQuery = {
        text,
        values: (values as unknown[] | undefined) ?? [],
        queryMode: 'extended',
      };
      return query(config);
    }
    return query(...args);
  };
  client.query = patched as typeof client.query;
}
