#!/usr/bin/env node
// Entry point of `npx rolepolicy`: registers the @rolepolicy/* alias hook for the compiled output in dist/,
// then runs the CLI (apps/cli/src/main.ts, built by `npm run build`, which `npm ci` runs via prepare).
import '../tools/register-aliases.mjs';

const { run } = await import('../dist/apps/cli/src/main.js');
process.exitCode = await run(process.argv);
