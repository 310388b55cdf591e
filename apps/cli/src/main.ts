// `rolepolicy` command line: validate, inspect, plan and apply a policy against one database.
// Exit codes: 0 ok / converged, 1 error, 2 invalid policy (validate) or changes pending (plan).
// Startup loads only commander and the command definitions: each command imports its implementation
// (and @kubernetes/client-node, pg, the review renderer, ...) when it runs, so `--help` and `validate`
// do not pay for the others (docs/cli.md, "Startup"; bench: npm run bench -- cli-start).

import { Command, CommanderError } from 'commander';

import { registerCandidateCommands, registerClusterCommands, UsageError } from './cluster/register.js';
import { hoistLeadingFlags } from './cluster/leading-flags.js';
import {
  PASSWORD_HELP,
  registerCandidateDiff,
  registerGenerateCommand,
  registerPolicyCommands,
  registerReviewCommand,
} from './database-commands.js';
import { CliError, EXIT, processIo, type CliIo } from './io.js';

const CLUSTER_HELP = `
In the cluster (also as the kubectl plugin: kubectl rolepolicy ...):
  plans, approve PLAN, deny PLAN, review PLAN, access request|approve|deny|list, candidate create|list|status|diff NAME,
  reconcile POLICY, whoami. They read the kubeconfig as kubectl does (--kubeconfig, --context, -n, -A, --as).
  Exit codes: 0 ok, 1 error, 2 usage, 3 refused (not found, forbidden, invalid, already decided, expired),
  4 --wait ended without the outcome. ROLEPOLICY_POLL_MS: how often --wait reads (default 1000).
`;

function buildProgram(io: CliIo, setExit: (code: number) => void, name: string): Command {
  const program = new Command(name)
    .description(
      'Plan and apply PostgreSQL role policies (roles, grants, default privileges, memberships), and decide plans and access requests in the cluster.',
    )
    .exitOverride()
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr })
    .addHelpText('after', PASSWORD_HELP)
    .addHelpText('after', CLUSTER_HELP);

  registerPolicyCommands(program, io, setExit);
  const candidate = program
    .command('candidate')
    .description('PostgresPolicyCandidate proposals: in the cluster, or offline with diff -f')
    .addHelpText(
      'after',
      '\nExample:\n  kubectl rolepolicy candidate create shop -f shop-next.yaml -n shop\n  kubectl rolepolicy candidate status shop-5d41402abc4b -n shop\n',
    );
  registerCandidateCommands(candidate, io, setExit);
  registerCandidateDiff(candidate, io, setExit);
  registerReviewCommand(program, io, setExit);
  registerClusterCommands(program, io, setExit);
  registerGenerateCommand(program, io, setExit);
  return program;
}

/**
 * Whether `error` is the catalog's SafeError (its message carries no secrets). The catalog is imported
 * here, not at startup: a SafeError comes only from a command that has loaded it already.
 */
async function isSafeError(error: unknown): Promise<boolean> {
  if (!(error instanceof Error)) return false;
  const { SafeError } = await import('@rolepolicy/catalog');
  return error instanceof SafeError;
}

/**
 * Runs the CLI on `argv` (as process.argv: node, script, args...) and returns the exit code.
 * @example `process.exitCode = await run(process.argv);`
 */
export async function run(
  argv: readonly string[],
  io: CliIo = processIo(),
  name = 'rolepolicy',
): Promise<number> {
  let code: number = EXIT.ok;
  const program = buildProgram(
    io,
    (exit) => {
      code = exit;
    },
    name,
  );
  try {
    await program.parseAsync([...argv.slice(0, 2), ...hoistLeadingFlags(argv.slice(2))]);
    return code;
  } catch (error) {
    if (error instanceof UsageError) return EXIT.usage;
    if (error instanceof CommanderError) {
      return error.exitCode === 0 ? EXIT.ok : EXIT.error;
    }
    if (error instanceof CliError) {
      io.stderr(`rolepolicy: ${error.message}\n`);
      return error.exitCode;
    }
    if (await isSafeError(error)) {
      io.stderr(`rolepolicy: ${(error as Error).message}\n`);
      return EXIT.error;
    }
    // Anything else may carry connection details: print only its type.
    io.stderr(`rolepolicy: unexpected ${error instanceof Error ? error.name : 'error'}\n`);
    return EXIT.error;
  }
}
