// SQL rendering surface: renderSql plus the quoting helpers other parts (catalog reads, tests) reuse.
// Nothing here touches a database; the output is executed elsewhere, one statement at a time.
export { renderSql, sha256Hex } from './render.js';
export { SqlRenderError, type SqlRenderErrorCode } from './errors.js';
export { quoteIdent, quoteLiteral, quoteQualified, quoteRole, renderGrantee } from './quote.js';
export { LIST_QUOTE_GUCS, isListGuc, splitGucList, renderGucValue } from './guc.js';
export { isPlausibleIdentityArgs, splitRoutineName, type RoutineName } from './routine.js';
export { REDACTED, PG16 } from './render-change.js';
export type { RenderedSql, SqlContext, Statement } from './types.js';
