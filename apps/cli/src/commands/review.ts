// `rolepolicy review -f FILE --database-url URL`: plan as `plan` does, read the preflight's catalog facts
// as the same role, and print the review artifact v2 as JSON, a self-contained HTML report or a terminal
// summary. The artifact never holds a password, verifier, comment, config value or connection URL.

import { readReviewFacts, withRedaction, type CatalogConnection } from '@rolepolicy/catalog';
import { contentDigest, type DesiredState, type ReconciliationMode } from '@rolepolicy/policy';
import { buildReviewArtifact, ReviewInputError, toolVersion, type ReviewArtifact } from '@rolepolicy/review';

import { CliError, EXIT, type CliIo } from '../io.js';
import { expandOrThrow, planningInput, planOnce, type CliPlan, type PlanningInput } from '../planning.js';
import { loadPolicyToPlan, requireContent } from '../policy-file.js';
import { connectFromOptions, type ConnectionOptions } from './connect.js';
import { printArtifact, type ReviewFormat } from './print-artifact.js';

/** Options of review. */
export interface ReviewOptions extends ConnectionOptions {
  readonly mode?: ReconciliationMode;
  readonly format?: ReviewFormat;
  readonly commit?: string;
  readonly targetLabel?: string;
  readonly capturedAt?: string;
  readonly rotatePasswords?: boolean;
}

/** Builds the artifact of a plan just computed, reading the preflight facts on the same connection. */
export async function reviewOf(
  connection: CatalogConnection,
  result: CliPlan,
  context: {
    content: unknown;
    desired: DesiredState;
    input: PlanningInput;
    file: string;
    commit?: string | undefined;
    targetLabel?: string | undefined;
    capturedAt: string;
  },
): Promise<ReviewArtifact> {
  const facts = await withRedaction(connection, () =>
    readReviewFacts(connection.db, result.plan.changes, result.snapshot.server_version_num),
  );
  const { host, port, database } = connection.target;
  try {
    return buildReviewArtifact({
      toolVersion: toolVersion(),
      capturedAt: context.capturedAt,
      contentDigest: contentDigest(context.content).digest,
      ...(context.commit !== undefined ? { commit: context.commit } : {}),
      targetLabel: context.targetLabel ?? `${database} on ${host}:${port}`,
      document: context.file === '-' ? 'stdin' : context.file,
      mode: context.input.mode,
      desired: context.desired,
      scope: context.input.scope,
      snapshot: result.snapshot,
      plan: result.plan,
      facts,
    });
  } catch (error) {
    if (error instanceof ReviewInputError) {
      throw new CliError(error.message.replace('provenance.', '--').replace('_', '-'));
    }
    throw error;
  }
}

/** One stderr line per error or warning finding and per preflight issue (for `plan`). */
export function reviewWarnings(artifact: ReviewArtifact): string[] {
  return [
    ...artifact.recorded.findings
      .filter((f) => f.severity !== 'info')
      .map((f) => `review: ${f.severity} ${f.kind}: ${f.message}`),
    ...artifact.preflight.flatMap((p) =>
      p.issues.map((i) => `review: preflight ${p.check} ${i.code}: ${i.message}`),
    ),
  ];
}

/** Runs review; returns the exit code (0 when the artifact was produced). */
export async function reviewCommand(
  file: string,
  options: ReviewOptions,
  io: CliIo,
  now: () => Date,
): Promise<number> {
  const policy = await loadPolicyToPlan(file, io.stdin);
  const content = requireContent(policy);
  const desired = expandOrThrow(content, policy.policyName);
  const input = planningInput(desired, {
    mode: options.mode,
    allowSchemaOwnerTransfers: policy.allowSchemaOwnerTransfers,
    rotatePasswords: options.rotatePasswords ?? false,
  });
  const connection = connectFromOptions(options, io);
  try {
    const result = await planOnce(connection, input);
    const artifact = await reviewOf(connection, result, {
      content,
      desired,
      input,
      file,
      commit: options.commit,
      targetLabel: options.targetLabel,
      capturedAt:
        options.capturedAt ??
        now()
          .toISOString()
          .replace(/\.\d{3}Z$/, 'Z'),
    });
    printArtifact(artifact, options.format, io);
    return EXIT.ok;
  } finally {
    await connection.close();
  }
}
