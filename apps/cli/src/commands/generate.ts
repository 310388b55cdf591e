// `rolepolicy generate --database-url URL --roles GLOB`: reads a live database (one transaction) and
// prints a PostgresPolicy manifest describing the selected roles' access; warnings go to stderr.

import { readForGenerate, withRedaction } from '@rolepolicy/catalog';
import { boundWarnings, generatePolicy, renderManifest, suggestProfiles } from '@rolepolicy/policy';

import { CliError, EXIT, type CliIo } from '../io.js';
import { connectFromOptions, type ConnectionOptions } from './connect.js';

/** Options of `generate`. */
export interface GenerateCommandOptions extends ConnectionOptions {
  readonly roles: readonly string[];
  readonly exclude?: readonly string[];
  readonly mode: 'authoritative' | 'additive';
  readonly name?: string;
  readonly namespace?: string;
  readonly connectionSecret?: string;
  readonly suggestProfiles?: boolean;
}

/** Kubernetes object names: DNS-1123 subdomain (name, Secret) and label (namespace). */
const SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

function checkName(option: string, value: string | undefined, pattern: RegExp, max: number): void {
  if (value === undefined) return;
  if (value.length > max || !pattern.test(value)) {
    throw new CliError(
      `${option} "${value}" is not a valid Kubernetes name (lowercase letters, digits and '-', at most ${max} characters)`,
    );
  }
}

/** A default metadata.name from the database name: lowercased, other characters as '-'. */
function nameOf(database: string): string {
  const name = database
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 63)
    .replace(/-+$/, '');
  return name === '' ? 'generated' : name;
}

/** Runs generate; returns the exit code. */
export async function generateCommand(options: GenerateCommandOptions, io: CliIo): Promise<number> {
  const empty = options.roles.find((glob) => glob.trim() === '');
  if (empty !== undefined) throw new CliError('--roles: a glob must not be empty (e.g. --roles "app_*")');
  if ((options.exclude ?? []).some((glob) => glob.trim() === ''))
    throw new CliError('--exclude: a glob must not be empty');
  checkName('--name', options.name, SUBDOMAIN, 253);
  checkName('--namespace', options.namespace, LABEL, 63);
  checkName('--connection-secret', options.connectionSecret, SUBDOMAIN, 253);
  const connection = connectFromOptions(options, io);
  try {
    const source = await withRedaction(connection, () =>
      readForGenerate(
        connection.db,
        { roles: options.roles, exclude: options.exclude ?? [] },
        connection.target,
      ),
    );
    if (source.selected_roles.length === 0) {
      throw new CliError(
        `--roles ${options.roles.map((glob) => `"${glob}"`).join(' ')} matched no role that can be managed (predefined pg_* roles and the bootstrap superuser are always left out)`,
      );
    }
    let generated = generatePolicy(source, { mode: options.mode });
    if (options.suggestProfiles === true) {
      const suggestion = suggestProfiles(generated);
      generated = suggestion.policy;
      for (const line of suggestion.report) io.stderr(`suggest-profiles: ${line}\n`);
    }
    const bounds = boundWarnings(generated.content);
    generated = {
      ...generated,
      notes: { ...generated.notes, header: [...bounds, ...generated.notes.header] },
      warnings: [...generated.warnings, ...bounds],
    };
    for (const warning of generated.warnings) io.stderr(`warning: ${warning}\n`);
    const name = options.name ?? nameOf(source.snapshot.current_database);
    io.stdout(
      renderManifest(generated.content, generated.notes, {
        name,
        namespace: options.namespace ?? null,
        connectionSecret: options.connectionSecret ?? `${name}-database`,
        database: source.snapshot.current_database,
      }),
    );
    return EXIT.ok;
  } finally {
    await connection.close();
  }
}
