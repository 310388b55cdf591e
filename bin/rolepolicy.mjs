#!/usr/bin/env node
// Entry point of `npx rolepolicy`: runs the CLI compiled into dist/ (apps/cli/src/main.ts, built by
// `npm run build`, which `npm ci` runs via prepare). The build links the @rolepolicy/* libraries into
// dist/node_modules, so Node resolves them itself; only a dist/ compiled by plain tsc, without that
// step, falls back to the alias hook (slower: every import crosses the hook's worker thread).
import { existsSync } from 'node:fs';

if (!existsSync(new URL('../dist/node_modules/@rolepolicy/', import.meta.url))) {
  await import('../tools/register-aliases.mjs');
}
const { run } = await import('../dist/apps/cli/src/main.js');
process.exitCode = await run(process.argv);
