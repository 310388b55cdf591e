// `rolepolicy candidate diff`: what a PostgresPolicyCandidate's content would change against a database,
// offline (no cluster), with its content digest, so a pull request can show a proposal before the object
// exists. Read-only: inspection only, never SQL that changes anything. Exit 0 no changes, 2 changes, 1 error.
import { CONTENT_DIGEST_ENCODING, contentDigest } from '@rolepolicy/policy';
import { parseAllDocuments } from 'yaml';

import { CliError, EXIT, type CliIo } from '../io.js';
import { formatPlan } from '../output.js';
import { expandOrThrow, planningInput, planOnce } from '../planning.js';
import { readPolicyText } from '../policy-file.js';
import { connectFromOptions } from './connect.js';
import { reportPlanProblems, type PlanOptions } from './plan.js';

/** The candidate as the diff reads it: its content and the policy whose context names generated Secrets. */
export interface LoadedCandidate {
  readonly content: Record<string, unknown>;
  readonly policyName: string;
  readonly name: string;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Parses one PostgresPolicyCandidate manifest; errors name the field. */
export function parseCandidateText(text: string): LoadedCandidate {
  const values = parseAllDocuments(text)
    .map((document) => {
      if (document.errors.length > 0) {
        throw new CliError(`invalid YAML: ${document.errors.map((e) => e.message).join('; ')}`);
      }
      return document.toJS() as unknown;
    })
    .filter((v) => v !== null && v !== undefined);
  const candidates = values.filter((v) => isObject(v) && v['kind'] === 'PostgresPolicyCandidate');
  if (candidates.length !== 1) {
    throw new CliError('the file must hold exactly one PostgresPolicyCandidate manifest');
  }
  const candidate = candidates[0] as Record<string, unknown>;
  const spec = isObject(candidate['spec']) ? candidate['spec'] : {};
  if (!isObject(spec['content'])) throw new CliError('spec.content: required, must be an object');
  const policyRef = isObject(spec['policyRef']) ? spec['policyRef'] : {};
  if (typeof policyRef['name'] !== 'string' || policyRef['name'] === '') {
    throw new CliError('spec.policyRef.name: required, the parent PostgresPolicy');
  }
  const metadata = isObject(candidate['metadata']) ? candidate['metadata'] : {};
  return {
    content: spec['content'],
    policyName: policyRef['name'],
    name: typeof metadata['name'] === 'string' ? metadata['name'] : '(unnamed)',
  };
}

/** Runs `candidate diff`; returns the exit code. */
export async function candidateDiffCommand(file: string, options: PlanOptions, io: CliIo): Promise<number> {
  const candidate = parseCandidateText(await readPolicyText(file, io.stdin));
  const digest = contentDigest(candidate.content);
  // Generated Secret names follow the parent policy, as when the service plans the candidate.
  const desired = expandOrThrow(candidate.content, candidate.policyName);
  const input = planningInput(desired, {
    mode: options.mode,
    allowSchemaOwnerTransfers: false,
    rotatePasswords: options.rotatePasswords ?? false,
  });
  const connection = connectFromOptions(options, io);
  try {
    const result = await planOnce(connection, input);
    io.stdout(
      `candidate ${candidate.name} for policy ${candidate.policyName}\n` +
        `content digest: ${digest.digest} (${CONTENT_DIGEST_ENCODING})\n`,
    );
    io.stdout(formatPlan(result, options.format ?? 'summary'));
    reportPlanProblems(result, io);
    return result.plan.changes.length === 0 ? EXIT.ok : EXIT.pending;
  } finally {
    await connection.close();
  }
}
