// Runs the kubectl plugin from source (the e2e puts a `kubectl-rolepolicy` script on PATH that starts this
// through the TypeScript hooks). The published entry is bin/kubectl-rolepolicy.mjs, on the compiled main.js.
import { run } from './main.js';

process.exitCode = await run(process.argv, undefined, 'kubectl rolepolicy');
