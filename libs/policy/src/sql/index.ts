// SQL rendering surface: renderSql plus the quoting helpers other parts (catalog reads, tests) reuse.
// Nothing here touches a database; the output is executed elsewhere, one statement at a time.
export { renderSql, sha256Hex } from './render.js';
export { SqlRenderError, type SqlRenderErrorCode } from './errors.js';
export { quoteIdent, quoteLiteral, quoteQualified, quoteRole, renderGrantee } from './quote.js';
export { LIST_QUOTE_GUCS, isListGuc, splitGucList, renderGucValue } from './guc.js';
export { isPlausibleIdentityArgs, splitRoutineName, type RoutineName } from './routine.js';
export { REDACTED, PG16 } from './render-change.js';
export { MAX_LIST_BYTES, MAX_LIST_ITEMS } from './group.js';
export type { RenderedSql, RenderOptions, SqlContext, Statement } from './types.js';
