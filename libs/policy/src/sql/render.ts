// renderSql: the plan's changes -> ordered (grouped) statements, full and redacted SQL, statement count and hashes.
// Pure: reads only the changes and the context; a change it cannot render is an error, never a fallback.

import { createHash } from 'node:crypto';
import type { Change } from '../model/change.js';
import { SqlRenderError } from './errors.js';
import { groupStatements, ungroupedStatements, type NumberedPart } from './group.js';
import { isAclBatch, renderChange } from './render-change.js';
import { indexInventory } from './targets.js';
import type { RenderedSql, RenderOptions, SqlContext } from './types.js';

/** Lowercase hex SHA-256 of the UTF-8 bytes of `text`. */
export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/**
 * Renders changes in plan order, then groups compatible per-object GRANT/REVOKE statements into one
 * (`group.ts`; `options.statements: 'per_object'` keeps one statement per object and grantee). Each
 * statement keeps the indices of the changes it carries so execution can report the redacted failing
 * statement. Throws `SqlRenderError` (with `changeIndex`) on the first unrenderable change, e.g. a
 * `set_password` without a verifier in `context.passwords`.
 *
 * @example renderSql([{ kind: 'drop_role', name: 'old' }], ctx).sql === 'DROP ROLE IF EXISTS "old";'
 */
export function renderSql(
  changes: readonly Change[],
  context: SqlContext,
  options: RenderOptions = {},
): RenderedSql {
  const parts: NumberedPart[] = [];
  const inventory = indexInventory(context.inventory);
  let redactions = 0;
  changes.forEach((change, changeIndex) => {
    try {
      for (const part of renderChange(change, context, inventory)) {
        if (isAclBatch(part)) {
          if (part.objects.length > 0) parts.push({ part, changeIndex });
        } else {
          if (part.redacted !== part.sql) redactions++;
          parts.push({ part, changeIndex });
        }
      }
    } catch (error) {
      if (error instanceof SqlRenderError && error.changeIndex === -1) {
        throw new SqlRenderError(
          error.code,
          `change ${changeIndex} (${change.kind}): ${error.message}`,
          changeIndex,
        );
      }
      throw error;
    }
  });
  const statements =
    options.statements === 'per_object' ? ungroupedStatements(parts) : groupStatements(parts);
  const sql = statements.map((s) => s.sql).join('\n');
  const sqlHash = sha256Hex(sql);
  // Without secrets the preview is the SQL itself: skip building and hashing a second copy.
  const redactedSql = redactions === 0 ? sql : statements.map((s) => s.redacted).join('\n');
  return {
    statements,
    sql,
    redactedSql,
    statementCount: statements.length,
    sqlHash,
    redactedSqlHash: redactions === 0 ? sqlHash : sha256Hex(redactedSql),
  };
}
