// `rolepolicy validate -f FILE`: content validation with every error and its path (exit 2 when invalid),
// plus offline admission of rolepolicy.io manifests, printed as the API server would reject them.

import { validateContent } from '@rolepolicy/policy';

import { EXIT, type CliIo } from '../io.js';
import { parsePolicyText, readPolicyText } from '../policy-file.js';

/** Runs validate; returns the exit code. */
export async function validateCommand(file: string, io: CliIo): Promise<number> {
  const text = await readPolicyText(file, io.stdin);
  const policy = parsePolicyText(text);
  const problems: string[] = [];
  if (policy.isManifest) {
    // Loaded only for manifests: the admission engine (CRD schemas, CEL) is the heaviest import of the CLI.
    const { admitManifests } = await import('@rolepolicy/kube');
    for (const result of admitManifests(text)) {
      if (result.outcome === 'rejected' || result.outcome === 'unparseable') {
        const what = `${result.kind ?? 'document'}${result.name ? ` "${result.name}"` : ''}`;
        problems.push(`document ${result.index + 1} (${what}): ${result.message ?? 'rejected'}`);
      }
    }
  }
  if (policy.content !== null) {
    const validation = validateContent(policy.content, { root: 'spec' });
    if (!validation.ok) problems.push(...validation.errors.map((error) => `${error.path}: ${error.message}`));
  }
  if (problems.length > 0) {
    io.stderr(`invalid: ${problems.length} problem${problems.length === 1 ? '' : 's'}\n`);
    for (const problem of problems) io.stderr(`  ${problem}\n`);
    return EXIT.invalid;
  }
  io.stdout('valid\n');
  return EXIT.ok;
}
