// Runs the CLI from source (tests start it as a child process through the TypeScript hooks, no build).
// The published entry is bin/rolepolicy.mjs, which runs the compiled main.js the same way.
import { run } from './main.js';

process.exitCode = await run(process.argv);
