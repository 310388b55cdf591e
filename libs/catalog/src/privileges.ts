// Maps catalog privilege words (aclexplode) and letters to the spec's Privilege vocabulary.
// Unknown privileges (PostgreSQL 17's MAINTAIN, future additions) are ignored, never an error.

import { comparePrivileges, type Privilege } from '@rolepolicy/policy';

const BY_WORD: Readonly<Record<string, Privilege>> = {
  CONNECT: 'CONNECT',
  CREATE: 'CREATE',
  DELETE: 'DELETE',
  EXECUTE: 'EXECUTE',
  INSERT: 'INSERT',
  REFERENCES: 'REFERENCES',
  SELECT: 'SELECT',
  TEMPORARY: 'TEMPORARY',
  TEMP: 'TEMPORARY',
  TRIGGER: 'TRIGGER',
  TRUNCATE: 'TRUNCATE',
  UPDATE: 'UPDATE',
  USAGE: 'USAGE',
};

/** The Privilege for an aclexplode `privilege_type`, or null when the engine does not model it. */
export function privilegeFromCatalog(word: string): Privilege | null {
  return BY_WORD[word.toUpperCase()] ?? null;
}

/** De-duplicates and sorts privileges in canonical order. */
export function canonicalPrivileges(privileges: Iterable<Privilege>): Privilege[] {
  return [...new Set(privileges)].sort(comparePrivileges);
}
