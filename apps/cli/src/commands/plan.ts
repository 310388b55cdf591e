// `rolepolicy plan`: changes, phases, redacted SQL and changeDigest. Exit 0 when converged, 2 when changes
// are pending, 1 on error (including blockers such as an unsatisfiable wildcard).

import type { ReconciliationMode } from '@rolepolicy/policy';

import { CliError, EXIT, type CliIo } from '../io.js';
import { formatPlan, type PlanFormat } from '../output.js';
import { expandOrThrow, planningInput, planOnce, type CliPlan } from '../planning.js';
import { loadPolicyToPlan, requireContent } from '../policy-file.js';
import { connectFromOptions, type ConnectionOptions } from './connect.js';
import { reviewOf, reviewWarnings } from './review.js';

/** Options of plan (and the planning part of apply). */
export interface PlanOptions extends ConnectionOptions {
  readonly mode?: ReconciliationMode;
  readonly format?: PlanFormat;
  readonly rotatePasswords?: boolean;
}

/** Printed when additive mode leaves `ensure: absent` assertions or exclusive memberships unenforced. */
export const ADDITIVE_IGNORES_ABSENCE =
  'additive mode ignores ensure: absent assertions and exclusive memberships: nothing is revoked';

/** Prints warnings and raises blockers; shared with apply. */
export function reportPlanProblems(result: CliPlan, io: CliIo): void {
  for (const warning of result.plan.warnings) io.stderr(`warning: ${warning}\n`);
  // The spec: additive mode ignores `ensure: absent` (and exclusive stanzas) "with a warning".
  if (result.plan.additiveIgnoredAbsence) io.stderr(`warning: ${ADDITIVE_IGNORES_ABSENCE}\n`);
  if (result.plan.blockers.length > 0) {
    throw new CliError(['the plan is blocked:', ...result.plan.blockers.map((b) => `  ${b}`)].join('\n'));
  }
  // The spec's OwnerTransferBlocked rule: without this, adopt mode silently took schema ownership.
  if (result.plan.ownerTransferBlocked) {
    throw new CliError(
      'the plan is blocked (OwnerTransferBlocked): adopt mode would transfer schema ownership and ' +
        'allow_schema_owner_transfers is false; set allow_schema_owner_transfers: true to permit it',
    );
  }
}

/** Runs plan; returns the exit code. */
export async function planCommand(file: string, options: PlanOptions, io: CliIo): Promise<number> {
  const policy = await loadPolicyToPlan(file, io.stdin);
  const desired = expandOrThrow(requireContent(policy), policy.policyName);
  const input = planningInput(desired, {
    mode: options.mode,
    allowSchemaOwnerTransfers: policy.allowSchemaOwnerTransfers,
    rotatePasswords: options.rotatePasswords ?? false,
  });
  const connection = connectFromOptions(options, io);
  try {
    const result = await planOnce(connection, input);
    io.stdout(formatPlan(result, options.format ?? 'summary'));
    // The review's findings and preflight issues, so problems show before any SQL runs (docs/review.md).
    const artifact = await reviewOf(connection, result, {
      content: requireContent(policy),
      desired,
      input,
      file,
      capturedAt: '1970-01-01T00:00:00Z',
      targetLabel: 'plan',
    });
    for (const line of reviewWarnings(artifact)) io.stderr(`${line}\n`);
    reportPlanProblems(result, io);
    return result.plan.changes.length === 0 ? EXIT.ok : EXIT.pending;
  } finally {
    await connection.close();
  }
}
