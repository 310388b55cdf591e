// Rewrites the generated configuration reference of docs/operations.md (npm run gen:operations).
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { format, resolveConfig } from 'prettier';
import { BEGIN, END, renderReference } from './operations-reference.js';

// From tools/ (ts) or dist/tools/ (compiled): the repository's docs/ either way.
const doc = fileURLToPath(new URL('../docs/operations.md', import.meta.url)).replace('/dist/docs/', '/docs/');
const text = readFileSync(doc, 'utf8');
const start = text.indexOf(BEGIN);
const end = text.indexOf(END);
const block = renderReference();
const next =
  start >= 0 && end > start
    ? text.slice(0, start) + block + text.slice(end + END.length)
    : `${text.trimEnd()}\n\n## Configuration reference\n\n${block}\n`;
writeFileSync(doc, await format(next, { ...(await resolveConfig(doc)), parser: 'markdown' }));
