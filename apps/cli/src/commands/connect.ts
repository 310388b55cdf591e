// Opens the catalog connection for a command from --database-url (default: DATABASE_URL) and --set-role.
// The URL is a secret: it is never printed, and connection errors are redacted by libs/catalog.

import { openConnection, type CatalogConnection } from '@rolepolicy/catalog';

import { CliError, type CliIo } from '../io.js';

/** Connection options shared by inspect, plan and apply. */
export interface ConnectionOptions {
  readonly databaseUrl?: string;
  readonly setRole?: string;
}

/** Opens a pool (nothing connects until the first query). */
export function connectFromOptions(options: ConnectionOptions, io: CliIo): CatalogConnection {
  const url = options.databaseUrl ?? io.env['DATABASE_URL'];
  if (!url) throw new CliError('no database: pass --database-url or set DATABASE_URL');
  return openConnection({ url, setRole: options.setRole ?? null, maxConnections: 3 });
}
