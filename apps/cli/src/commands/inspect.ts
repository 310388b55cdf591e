// `rolepolicy inspect -f FILE --database-url URL`: the snapshot of exactly the policy's managed scope, as JSON.

import { inspect, withRedaction } from '@rolepolicy/catalog';

import { EXIT, type CliIo } from '../io.js';
import { expandOrThrow, planningInput } from '../planning.js';
import { loadPolicyToPlan, requireContent } from '../policy-file.js';
import { connectFromOptions, type ConnectionOptions } from './connect.js';

/** Runs inspect; returns the exit code. */
export async function inspectCommand(file: string, options: ConnectionOptions, io: CliIo): Promise<number> {
  const policy = await loadPolicyToPlan(file, io.stdin);
  const desired = expandOrThrow(requireContent(policy), policy.policyName);
  const { scope } = planningInput(desired, { allowSchemaOwnerTransfers: false, rotatePasswords: false });
  const connection = connectFromOptions(options, io);
  try {
    const snapshot = await withRedaction(connection, () => inspect(connection.db, scope, connection.target));
    io.stdout(`${JSON.stringify(snapshot, null, 2)}\n`);
    return EXIT.ok;
  } finally {
    await connection.close();
  }
}
