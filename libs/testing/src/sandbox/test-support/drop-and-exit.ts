// A process that drops a sandbox database with a short wait and then ends on its own, as a test file's
// worker does after afterAll: sandbox.int-spec.ts checks that the drop still finishes on the server.
// Arguments: <admin URL> <database> <wait ms>. Prints `returned` once dropSandboxDatabase has returned.
import { dropSandboxDatabase } from '../postgres.js';

const [adminUrl, database, waitMs] = process.argv.slice(2);
await dropSandboxDatabase(adminUrl!, database!, Number(waitMs));
console.log('returned');
