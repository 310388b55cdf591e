// PostgreSQL facts about which privileges each object kind accepts and where default privileges converge.
// A grant outside these sets fails at apply time (or never converges), so validation rejects it up front.

import type { ObjectType, Privilege } from '../model/index.js';

const RELATION: readonly Privilege[] = [
  'DELETE',
  'INSERT',
  'REFERENCES',
  'SELECT',
  'TRIGGER',
  'TRUNCATE',
  'UPDATE',
];

/** Privileges PostgreSQL accepts per object type (GRANT and ALTER DEFAULT PRIVILEGES alike). */
export const PRIVILEGES_BY_TYPE: Readonly<Record<ObjectType, readonly Privilege[]>> = {
  database: ['CONNECT', 'CREATE', 'TEMPORARY'],
  function: ['EXECUTE'],
  materialized_view: RELATION,
  schema: ['CREATE', 'USAGE'],
  sequence: ['SELECT', 'UPDATE', 'USAGE'],
  table: RELATION,
  type: ['USAGE'],
  view: RELATION,
};

/**
 * Object types default privileges can never target: pg_default_acl has no database kind, and stores view and
 * materialized_view defaults as table defaults, so declaring them would never converge.
 */
export const DEFAULT_PRIVILEGE_NEVER: readonly ObjectType[] = ['database', 'materialized_view', 'view'];
