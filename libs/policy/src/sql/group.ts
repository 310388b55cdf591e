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

import { isAclBatch, type AclBatch, type RenderedPart } from './render-change.js';
import type { TargetKeyword } from './targets.js';
import type { Statement } from './types.js';

/** At most this many objects (or grantees) in one statement's list. */
export const MAX_LIST_ITEMS = 1000;
/** At most this many bytes of object (or grantee) text in one statement's list. */
export const MAX_LIST_BYTES = 64 * 1024;

/** A rendered part with the index of the change that produced it. */
export interface NumberedPart {
  readonly part: RenderedPart;
  readonly changeIndex: number;
}

interface Head {
  readonly verb: AclBatch['verb'];
  readonly privileges: string;
  readonly keyword: TargetKeyword;
}

/** One object of a grouped run, and which change granted it to which grantee. */
interface ObjectEntry {
  readonly object: string;
  readonly grantees: string[];
  readonly pairs: { readonly grantee: string; readonly changeIndex: number }[];
}

const byteLength = (text: string): number => Buffer.byteLength(text, 'utf8');

/** Splits a list into chunks of at most MAX_LIST_ITEMS items and MAX_LIST_BYTES bytes (never empty). */
export function chunkList<T>(items: readonly T[], textOf: (item: T) => string): T[][] {
  if (items.length <= MAX_LIST_ITEMS) {
    // A UTF-16 unit is at most 3 UTF-8 bytes: most lists fit without measuring each item exactly.
    let upper = 0;
    for (const item of items) upper += textOf(item).length * 3 + 2;
    if (upper <= MAX_LIST_BYTES) return [[...items]];
  }
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

const preposition = (verb: Head['verb']): string => (verb === 'GRANT' ? 'TO' : 'FROM');

function statementOf(
  head: Head,
  objects: readonly string[],
  grantees: readonly string[],
  changeIndices: readonly number[],
): Statement {
  const text = `${head.verb} ${head.privileges} ON ${head.keyword} ${objects.join(', ')} ${preposition(head.verb)} ${grantees.join(', ')};`;
  return { sql: text, redacted: text, changeIndex: changeIndices[0]!, changeIndices };
}

const ascendingUnique = (values: readonly number[]): number[] => {
  if (values.length === 1) return [values[0]!];
  return [...new Set(values)].sort((a, b) => a - b);
};

/** Every (object chunk x grantee chunk) statement of one group, with the changes it carries. */
function emitGroup(head: Head, entries: readonly ObjectEntry[], grantees: readonly string[]): Statement[] {
  const statements: Statement[] = [];
  const granteeChunks = chunkList(grantees, (g) => g);
  for (const granteeChunk of granteeChunks) {
    const inChunk = granteeChunks.length === 1 ? null : new Set(granteeChunk);
    for (const objectChunk of chunkList(entries, (e) => e.object)) {
      const changes: number[] = [];
      for (const entry of objectChunk) {
        for (const pair of entry.pairs) {
          if (inChunk === null || inChunk.has(pair.grantee)) changes.push(pair.changeIndex);
        }
      }
      statements.push(
        statementOf(
          head,
          objectChunk.map((e) => e.object),
          granteeChunk,
          ascendingUnique(changes),
        ),
      );
    }
  }
  return statements;
}

interface NumberedBatch {
  readonly batch: AclBatch;
  readonly changeIndex: number;
}

/**
 * A run of GRANTs: per (privileges, keyword, schema), objects with the same grantee list share statements.
 * Each group is placed where its first per-object statement was, so the grouped SQL reads in plan order.
 */
function groupGrants(run: readonly NumberedBatch[]): Statement[] {
  const families = new Map<string, { head: Head; objects: Map<string, ObjectEntry> }>();
  const firstSeen = new Map<ObjectEntry, number>();
  let position = 0;
  for (const { batch, changeIndex } of run) {
    let family = families.get(batch.family);
    if (family === undefined) {
      family = {
        head: { verb: 'GRANT', privileges: batch.privileges, keyword: batch.keyword },
        objects: new Map(),
      };
      families.set(batch.family, family);
    }
    for (const object of batch.objects) {
      let entry = family.objects.get(object);
      if (entry === undefined) {
        entry = { object, grantees: [], pairs: [] };
        family.objects.set(object, entry);
        firstSeen.set(entry, position);
      }
      if (!entry.grantees.includes(batch.grantee)) entry.grantees.push(batch.grantee);
      entry.pairs.push({ grantee: batch.grantee, changeIndex });
      position++;
    }
  }
  const groups: { head: Head; first: number; grantees: readonly string[]; entries: ObjectEntry[] }[] = [];
  for (const { head, objects } of families.values()) {
    const byGrantees = new Map<string, (typeof groups)[number]>();
    for (const entry of objects.values()) {
      const key = entry.grantees.length === 1 ? entry.grantees[0]! : entry.grantees.join('\u0000');
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
function groupRevokes(run: readonly NumberedBatch[]): Statement[] {
  const statements: Statement[] = [];
  let key: string | null = null;
  let head: Head | null = null;
  let grantee = '';
  let entries: ObjectEntry[] = [];
  const flush = (): void => {
    if (head !== null && entries.length > 0) statements.push(...emitGroup(head, entries, [grantee]));
    entries = [];
  };
  for (const { batch, changeIndex } of run) {
    const next = `${batch.family}\u0000${batch.grantee}`;
    if (next !== key) {
      flush();
      key = next;
      head = { verb: 'REVOKE', privileges: batch.privileges, keyword: batch.keyword };
      grantee = batch.grantee;
    }
    for (const object of batch.objects) {
      entries.push({ object, grantees: [batch.grantee], pairs: [{ grantee: batch.grantee, changeIndex }] });
    }
  }
  flush();
  return statements;
}

const single = (part: RenderedPart & { sql: string; redacted: string }, changeIndex: number): Statement => ({
  sql: part.sql,
  redacted: part.redacted,
  changeIndex,
  changeIndices: [changeIndex],
});

/**
 * Merges compatible consecutive GRANT/REVOKE statements (see the file header); every other statement is
 * passed through as it is. The result runs the same per-object operations as the input.
 */
export function groupStatements(parts: readonly NumberedPart[]): Statement[] {
  const out: Statement[] = [];
  let start = 0;
  while (start < parts.length) {
    const { part, changeIndex } = parts[start]!;
    if (!isAclBatch(part)) {
      out.push(single(part, changeIndex));
      start++;
      continue;
    }
    const run: NumberedBatch[] = [];
    let end = start;
    for (; end < parts.length; end++) {
      const next = parts[end]!;
      if (!isAclBatch(next.part) || next.part.verb !== part.verb) break;
      run.push({ batch: next.part, changeIndex: next.changeIndex });
    }
    out.push(...(part.verb === 'GRANT' ? groupGrants(run) : groupRevokes(run)));
    start = end;
  }
  return out;
}

/** One statement per object and grantee, as the changes expand (the form grouping starts from). */
export function ungroupedStatements(parts: readonly NumberedPart[]): Statement[] {
  const out: Statement[] = [];
  for (const { part, changeIndex } of parts) {
    if (!isAclBatch(part)) {
      out.push(single(part, changeIndex));
      continue;
    }
    const head = `${part.verb} ${part.privileges} ON ${part.keyword} `;
    const tail = ` ${preposition(part.verb)} ${part.grantee};`;
    const changeIndices = [changeIndex];
    for (const object of part.objects) {
      const text = `${head}${object}${tail}`;
      out.push({ sql: text, redacted: text, changeIndex, changeIndices });
    }
  }
  return out;
}
