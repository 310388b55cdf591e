#!/usr/bin/env node
// Entry point of the kubectl plugin: kubectl runs `kubectl-rolepolicy` from PATH for `kubectl rolepolicy ...`.
// The same program as bin/rolepolicy.mjs (compiled apps/cli/src/main.ts), named as kubectl users call it;
// the @rolepolicy/* libraries resolve as bin/rolepolicy.mjs explains.
import { existsSync } from 'node:fs';

if (!existsSync(new URL('../dist/node_modules/@rolepolicy/', import.meta.url))) {
  await import('../tools/register-aliases.mjs');
}
const { run } = await import('../dist/apps/cli/src/main.js');
process.exitCode = await run(process.argv, undefined, 'kubectl rolepolicy');
