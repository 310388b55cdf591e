// `rolepolicy apply`: plan, confirm (--yes, required without a terminal), then under the per-database
// advisory lock re-inspect, recompute the digest, refuse if it moved (or differs from --expect-digest), execute.

import { createInterface } from 'node:readline/promises';

import { executeUnderLock, ExecutionError, withRedaction } from '@rolepolicy/catalog';
import { renderSql } from '@rolepolicy/policy';

import { CliError, EXIT, type CliIo } from '../io.js';
import { formatPlan } from '../output.js';
import { resolvePasswords, verifiersOf, type ResolvedPasswords } from '../passwords.js';
import { expandOrThrow, planningInput, planOnce, type CliPlan } from '../planning.js';
import { loadPolicyToPlan, requireContent } from '../policy-file.js';
import { reportPlanProblems, type PlanOptions } from './plan.js';
import { connectFromOptions } from './connect.js';

/** Options of apply. */
export interface ApplyOptions extends PlanOptions {
  readonly yes?: boolean;
  readonly expectDigest?: string;
  readonly showGenerated?: boolean;
}

async function confirm(io: CliIo, count: number): Promise<boolean> {
  const prompt = createInterface({ input: io.stdin, terminal: false });
  try {
    io.stderr(`Apply ${count} change${count === 1 ? '' : 's'}? [y/N] `);
    const answer = await prompt.question('');
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    prompt.close();
  }
}

type LockedOutcome =
  | { readonly applied: true; readonly plan: CliPlan; readonly passwords: ResolvedPasswords }
  | { readonly applied: false; readonly reason: string };

/** Runs apply; returns the exit code. */
export async function applyCommand(file: string, options: ApplyOptions, io: CliIo): Promise<number> {
  const policy = await loadPolicyToPlan(file, io.stdin);
  const desired = expandOrThrow(requireContent(policy), policy.policyName);
  const input = planningInput(desired, {
    mode: options.mode,
    allowSchemaOwnerTransfers: policy.allowSchemaOwnerTransfers,
    rotatePasswords: options.rotatePasswords ?? false,
  });
  const connection = connectFromOptions(options, io);
  try {
    const shown = await planOnce(connection, input);
    io.stdout(formatPlan(shown, options.format ?? 'summary'));
    reportPlanProblems(shown, io);
    if (options.expectDigest !== undefined && options.expectDigest !== shown.digest.digest) {
      throw new CliError(
        `refusing to apply: the plan's changeDigest ${shown.digest.digest} differs from --expect-digest`,
      );
    }
    if (shown.plan.changes.length === 0) {
      io.stderr('nothing to apply\n');
      return EXIT.ok;
    }
    if (!options.yes) {
      if (!io.interactive) throw new CliError('refusing to apply without --yes: not running in a terminal');
      if (!(await confirm(io, shown.plan.changes.length))) throw new CliError('not applied');
    }
    const approved = options.expectDigest ?? shown.digest.digest;
    const outcome = await withRedaction(connection, () =>
      executeUnderLock<LockedOutcome>(connection.db, async (session) => {
        // Re-read under the lock: another applier may have changed the database since the plan was shown.
        const current = await planOnce({ ...connection, db: session }, input);
        if (current.digest.digest !== approved) {
          return {
            run: false,
            result: {
              applied: false,
              reason: `the plan changed since it was shown (changeDigest now ${current.digest.digest})`,
            },
          };
        }
        const passwords = resolvePasswords(current.plan.changes, input.desired.roles, io.env);
        const rendered = renderSql(current.plan.changes, {
          serverVersionNum: current.snapshot.server_version_num,
          inventory: current.snapshot.inventory,
          passwords: verifiersOf(passwords.cleartext),
          executorRole: current.snapshot.executor.role,
        });
        return {
          run: true,
          statements: rendered.statements,
          result: { applied: true, plan: current, passwords },
        };
      }),
    );
    if (!outcome.applied) throw new CliError(`refusing to apply: ${outcome.reason}`);
    io.stderr(
      `applied ${outcome.plan.preview.statementCount} statements (changeDigest ${outcome.plan.digest.digest})\n`,
    );
    for (const { role, password } of outcome.passwords.generated) {
      io.stderr(
        options.showGenerated
          ? `generated password for role ${JSON.stringify(role)}: ${password}\n`
          : `generated a password for role ${JSON.stringify(role)} (not shown; pass --show-generated to print it once)\n`,
      );
    }
    return EXIT.ok;
  } catch (error) {
    if (error instanceof ExecutionError) throw new CliError(error.message);
    throw error;
  } finally {
    await connection.close();
  }
}
