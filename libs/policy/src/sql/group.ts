// Statement grouping: the per-object GRANT/REVOKE statements of a rendered plan merged into fewer
// statements with the same effects (`GRANT SELECT ON TABLE "s"."a", "s"."b" TO "r1", "r2";`).
// Pure; the changes, their digest and their order are untouched, only how many statements carry them.
//
// Why each merge is safe (docs/sql-and-digests.md, "Statement grouping"):
// - Only consecutive statements of the same verb are merged: a statement of any other kind (SET ROLE of
//   a grantor's revoke, ALTER SCHEMA OWNER, memberships, default privileges) ends the run, so nothing
//   moves across it.
// - GRANT runs are grouped in two dimensions (objects x grantees). The renderer never grants WITH GRANT
//   OPTION, so the grants of a run commute: each adds privileges to one object's ACL and none depends on
//   another.
// - REVOKE runs only merge neighbours that differ in the object (same privileges, keyword, schema and
//   grantee). PostgreSQL applies a multi-object statement object by object in list order, so the
//   per-object operations run in exactly the order they did one statement at a time (revokes with
//   RESTRICT can depend on order through grant options; this keeps that order).
// - Objects are never mixed across schemas or keywords, and a list holds at most MAX_LIST_ITEMS items
//   and MAX_LIST_BYTES bytes, so a statement stays bounded whatever the plan size.

import type { AclParts, StatementText } from './render-change.js';
import type { TargetKeyword } from './targets.js';
import type { Statement } from './types.js';

/** At most this many objects (or grantees) in one statement's list. */
export const MAX_LIST_ITEMS = 1000;
/** At most this many bytes of object (or grantee) text in one statement's list. */
export const MAX_LIST_BYTES = 64 * 1024;

/** A per-object statement with the index of the change that produced it. */
export interface NumberedStatement extends StatementText {
  readonly changeIndex: number;
}

interface Head {
  readonly verb: AclParts['verb'];
  readonly privileges: string;
  readonly keyword: TargetKeyword;
}

/** One object of a grouped run, and which change granted it to which grantee. */
interface ObjectEntry {
  readonly object: string;
  readonly grantees: string[];
  readonly pairs: { readonly grantee: string; readonly changeIndex: number }[];
}

const familyKey = (acl: AclParts): string =>
  `${acl.privileges}\u0000${acl.target.keyword}\u0000${acl.target.scope}`;

const byteLength = (text: string): number => Buffer.byteLength(text, 'utf8');

/** Splits a list into chunks of at most MAX_LIST_ITEMS items and MAX_LIST_BYTES bytes (never empty). */
export function chunkList<T>(items: readonly T[], textOf: (item: T) => string): T[][] {
  const chunks: T[][] = [];
  let current: T[] = [];
  let bytes = 0;
  for (const item of items) {
    const size = byteLength(textOf(item)) + 2;
    if (current.length > 0 && (current.length >= MAX_LIST_ITEMS || bytes + size > MAX_LIST_BYTES)) {
      chunks.push(current);
      current = [];
      bytes = 0;
    }
    current.push(item);
    bytes += size;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}

function statementOf(
  head: Head,
  objects: readonly string[],
  grantees: readonly string[],
  changes: Iterable<number>,
): Statement {
  const preposition = head.verb === 'GRANT' ? 'TO' : 'FROM';
  const text = `${head.verb} ${head.privileges} ON ${head.keyword} ${objects.join(', ')} ${preposition} ${grantees.join(', ')};`;
  const changeIndices = [...new Set(changes)].sort((a, b) => a - b);
  return { sql: text, redacted: text, changeIndex: changeIndices[0]!, changeIndices };
}

/** Every (object chunk x grantee chunk) statement of one group, with the changes it carries. */
function emitGroup(head: Head, entries: readonly ObjectEntry[], grantees: readonly string[]): Statement[] {
  const statements: Statement[] = [];
  for (const granteeChunk of chunkList(grantees, (g) => g)) {
    const inChunk = new Set(granteeChunk);
    for (const objectChunk of chunkList(entries, (e) => e.object)) {
      const changes = objectChunk.flatMap((e) =>
        e.pairs.filter((p) => inChunk.has(p.grantee)).map((p) => p.changeIndex),
      );
      statements.push(
        statementOf(
          head,
          objectChunk.map((e) => e.object),
          granteeChunk,
          changes,
        ),
      );
    }
  }
  return statements;
}

/**
 * A run of GRANTs: per (privileges, keyword, schema), objects with the same grantee list share statements.
 * Each group is placed where its first per-object statement was, so the grouped SQL reads in plan order.
 */
function groupGrants(run: readonly NumberedStatement[]): Statement[] {
  const families = new Map<string, { head: Head; objects: Map<string, ObjectEntry> }>();
  const firstSeen = new Map<ObjectEntry, number>();
  run.forEach((statement, position) => {
    const acl = statement.acl!;
    const key = familyKey(acl);
    let family = families.get(key);
    if (family === undefined) {
      family = {
        head: { verb: 'GRANT', privileges: acl.privileges, keyword: acl.target.keyword },
        objects: new Map(),
      };
      families.set(key, family);
    }
    let entry = family.objects.get(acl.target.object);
    if (entry === undefined) {
      entry = { object: acl.target.object, grantees: [], pairs: [] };
      family.objects.set(acl.target.object, entry);
      firstSeen.set(entry, position);
    }
    if (!entry.grantees.includes(acl.grantee)) entry.grantees.push(acl.grantee);
    entry.pairs.push({ grantee: acl.grantee, changeIndex: statement.changeIndex });
  });
  const groups: { head: Head; first: number; grantees: readonly string[]; entries: ObjectEntry[] }[] = [];
  for (const { head, objects } of families.values()) {
    const byGrantees = new Map<string, (typeof groups)[number]>();
    for (const entry of objects.values()) {
      const key = entry.grantees.join('\u0000');
      const group = byGrantees.get(key);
      if (group !== undefined) group.entries.push(entry);
      else {
        const created = { head, first: firstSeen.get(entry)!, grantees: entry.grantees, entries: [entry] };
        byGrantees.set(key, created);
        groups.push(created);
      }
    }
  }
  groups.sort((a, b) => a.first - b.first);
  return groups.flatMap(({ head, entries, grantees }) => emitGroup(head, entries, grantees));
}

/** A run of REVOKEs: neighbours that differ only in the object share a statement, order kept. */
function groupRevokes(run: readonly NumberedStatement[]): Statement[] {
  const statements: Statement[] = [];
  let key: string | null = null;
  let head: Head | null = null;
  let grantee = '';
  let entries: ObjectEntry[] = [];
  const flush = (): void => {
    if (head !== null) statements.push(...emitGroup(head, entries, [grantee]));
    entries = [];
  };
  for (const statement of run) {
    const acl = statement.acl!;
    const next = `${familyKey(acl)}\u0000${acl.grantee}`;
    if (next !== key) {
      flush();
      key = next;
      head = { verb: 'REVOKE', privileges: acl.privileges, keyword: acl.target.keyword };
      grantee = acl.grantee;
    }
    entries.push({
      object: acl.target.object,
      grantees: [acl.grantee],
      pairs: [{ grantee: acl.grantee, changeIndex: statement.changeIndex }],
    });
  }
  flush();
  return statements;
}

/**
 * Merges compatible consecutive GRANT/REVOKE statements (see the file header); every other statement is
 * passed through as it is. The result runs the same per-object operations as the input.
 */
export function groupStatements(statements: readonly NumberedStatement[]): Statement[] {
  const out: Statement[] = [];
  let start = 0;
  while (start < statements.length) {
    const first = statements[start]!;
    if (first.acl === undefined) {
      out.push({
        sql: first.sql,
        redacted: first.redacted,
        changeIndex: first.changeIndex,
        changeIndices: [first.changeIndex],
      });
      start++;
      continue;
    }
    let end = start + 1;
    while (end < statements.length && statements[end]!.acl?.verb === first.acl.verb) end++;
    const run = statements.slice(start, end);
    out.push(...(first.acl.verb === 'GRANT' ? groupGrants(run) : groupRevokes(run)));
    start = end;
  }
  return out;
}

/** The statements one by one, as rendered per object (the form grouping starts from). */
export function ungroupedStatements(statements: readonly NumberedStatement[]): Statement[] {
  return statements.map((s) => ({
    sql: s.sql,
    redacted: s.redacted,
    changeIndex: s.changeIndex,
    changeIndices: [s.changeIndex],
  }));
}
