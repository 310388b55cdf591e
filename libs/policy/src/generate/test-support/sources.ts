// Builders for the generate tests: a GenerateSource over the diff tests' catalog snapshot builder.

import { catalogSnapshot } from '../../diff/test-support/builders.js';
import type { InventoryObject } from '../../model/snapshot.js';
import type { GrantEntry } from '../../model/state.js';
import type { GeneratedPolicy } from '../generate-policy.js';
import { renderManifest } from '../render-manifest.js';
import type { GenerateSource } from '../source.js';

export const databasePublic: GrantEntry = {
  object_type: 'database',
  schema: null,
  name: 'app',
  grantee: 'PUBLIC',
  privileges: ['CONNECT', 'TEMPORARY'],
};

export type SourceOverrides = Partial<Omit<GenerateSource, 'snapshot'>> & {
  readonly snapshot?: Partial<GenerateSource['snapshot']>;
};

export function source(overrides: SourceOverrides): GenerateSource {
  const { snapshot, ...rest } = overrides;
  return {
    // PostgreSQL's built-in PUBLIC privileges on the database, unless a test says otherwise.
    snapshot: catalogSnapshot({ grants: [databasePublic], ...snapshot }),
    selected_roles: (snapshot?.roles ?? []).map((role) => role.name).sort(),
    left_out: { predefined: [], bootstrap: [] },
    password_roles: [],
    inexpressible: [],
    global_default_pairs: [],
    ...rest,
  };
}

export const table = (schema: string, name: string, owner = 'owner'): InventoryObject => ({
  kind: 'table',
  schema,
  name,
  owner,
});
export const grant = (
  grantee: string,
  schema: string,
  name: string,
  privileges: GrantEntry['privileges'],
): GrantEntry => ({
  object_type: 'table',
  schema,
  name,
  grantee,
  privileges,
});

export const render = (content: GeneratedPolicy): string =>
  renderManifest(content.content, content.notes, {
    name: 'shop',
    namespace: 'shop',
    connectionSecret: 'shop-db',
    database: 'app',
  });
