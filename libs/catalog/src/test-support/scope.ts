// Test helpers for catalog suites: a ManagedScope with empty defaults, and a raw SQL runner on a sandbox.
// Roles are cluster-global, so suites prefix role names with their sandbox id and drop them afterwards.

import type { ManagedScope } from '@rolepolicy/policy';
import pg from 'pg';

/** A ManagedScope with every list empty, overridden by `partial`. */
export function scopeOf(partial: Partial<ManagedScope>): ManagedScope {
  return {
    roles: [],
    membership_grantors: [],
    schemas: [],
    owned_schemas: [],
    wildcards: [],
    public_objects: [],
    default_privilege_scopes: [],
    include_database_privileges: false,
    database_targets: [],
    function_signatures: [],
    ...partial,
  };
}

/** Runs raw SQL (one or several statements) on `url` as the connecting user. */
export async function runSql(url: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

/** Drops every role whose name starts with `prefix` (after dropping what they own in `databaseUrl`). */
export async function dropRolesWithPrefix(
  adminUrl: string,
  databaseUrls: readonly string[],
  prefix: string,
): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ rolname: string }>(
      'SELECT rolname FROM pg_roles WHERE starts_with(rolname, $1)',
      [prefix],
    );
    const names = rows.map((row) => `"${row.rolname.replaceAll('"', '""')}"`);
    if (names.length === 0) return;
    for (const url of databaseUrls) {
      const db = new pg.Client({ connectionString: url });
      await db.connect();
      try {
        // One role at a time: a multi-role DROP OWNED trips over default ACLs shared by two of them.
        for (const name of names) await db.query(`DROP OWNED BY ${name} CASCADE`);
      } finally {
        await db.end();
      }
    }
    await client.query(`DROP ROLE IF EXISTS ${names.join(', ')}`);
  } finally {
    await client.end();
  }
}
