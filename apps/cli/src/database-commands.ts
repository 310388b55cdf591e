// The `rolepolicy` commands that work on one database without a cluster: validate, inspect, plan, apply,
// generate, review -f and candidate diff -f, with the options they share. Each command loads its module
// when it runs, so `--help` stays fast.

import type { ReconciliationMode } from '@rolepolicy/policy';
import { Command, InvalidArgumentError, Option } from 'commander';

import { kubeFlags } from './cluster/register.js';
import type { ClusterFlags } from './cluster/context.js';
import type { ApplyOptions } from './commands/apply.js';
import type { GenerateCommandOptions } from './commands/generate.js';
import type { PlanOptions } from './commands/plan.js';
import type { ReviewOptions } from './commands/review.js';
import type { ReviewPlanOptions } from './commands/review-plan.js';
import { CliError, type CliIo } from './io.js';
import type { PlanFormat } from './output.js';

export const PASSWORD_HELP = `
Passwords:
  A role with password.secretRef {name: S} and secretKey K reads its password from the environment
  variable ROLEPOLICY_PASSWORD_<S>_<K> (upper-cased; every character other than A-Z and 0-9 becomes _),
  e.g. secretRef app-db, key password -> ROLEPOLICY_PASSWORD_APP_DB_PASSWORD.
  A role with password.generate gets a random password of the requested length when it is created;
  it is printed once, to stderr, only with --show-generated.
  Passwords, verifiers and URL credentials are never printed otherwise.

Environment:
  DATABASE_URL   default for --database-url
`;

/**
 * The policy's reconciliation modes (RECONCILIATION_MODES of @rolepolicy/policy, which a unit test keeps
 * equal): written out so that defining the commands does not load the policy engine.
 */
export const CLI_RECONCILIATION_MODES = [
  'authoritative',
  'additive',
  'adopt',
] as const satisfies readonly ReconciliationMode[];

function modeOption(): Option {
  return new Option('--mode <mode>', 'reconciliation mode (default: the policy reconciliation_mode)').choices(
    CLI_RECONCILIATION_MODES,
  );
}

function formatOption(): Option {
  return new Option('--format <format>', 'output format')
    .choices(['summary', 'sql', 'json'])
    .default('summary');
}

function digestArgument(value: string): string {
  if (!/^sha256:[0-9a-f]{64}$/.test(value)) throw new InvalidArgumentError('expected sha256:<64 hex digits>');
  return value;
}

interface RawOptions {
  readonly file: string;
  readonly databaseUrl?: string;
  readonly setRole?: string;
  readonly mode?: ReconciliationMode;
  readonly format?: PlanFormat;
  readonly rotatePasswords?: boolean;
  readonly yes?: boolean;
  readonly expectDigest?: string;
  readonly showGenerated?: boolean;
}

function timestampArgument(value: string): string {
  if (Number.isNaN(Date.parse(value)) || !/^\d{4}-\d{2}-\d{2}T/.test(value)) {
    throw new InvalidArgumentError('expected an RFC 3339 timestamp, e.g. 2026-11-25T12:00:00Z');
  }
  return value;
}

const withConnection = (command: Command): Command =>
  command
    .option('--database-url <url>', 'connection URL (default: $DATABASE_URL)')
    .option('--set-role <role>', 'SET ROLE to this role on every connection');

function collect(value: string, previous: readonly string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/** validate, inspect, plan and apply: a policy file against one database. */
export function registerPolicyCommands(program: Command, io: CliIo, setExit: (code: number) => void): void {
  program
    .command('validate')
    .description('validate policy content (and rolepolicy.io manifests offline); exit 2 when invalid')
    .requiredOption('-f, --file <file>', 'policy content or PostgresPolicy manifest; - for stdin')
    .action(async (options: RawOptions) => {
      const { validateCommand } = await import('./commands/validate.js');
      setExit(await validateCommand(options.file, io));
    });

  withConnection(
    program
      .command('inspect')
      .description("print the live snapshot of the policy's managed scope as JSON")
      .requiredOption('-f, --file <file>', 'policy content or PostgresPolicy manifest; - for stdin'),
  ).action(async (options: RawOptions) => {
    const { inspectCommand } = await import('./commands/inspect.js');
    setExit(await inspectCommand(options.file, options, io));
  });

  withConnection(
    program
      .command('plan')
      .description('show the changes; exit 0 when converged, 2 when changes are pending, 1 on error')
      .requiredOption('-f, --file <file>', 'policy content or PostgresPolicy manifest; - for stdin')
      .addOption(modeOption())
      .addOption(formatOption())
      .option('--rotate-passwords', 'set every managed password again (the CLI keeps no applied versions)')
      .addHelpText('after', PASSWORD_HELP),
  ).action(async (options: RawOptions) => {
    const { planCommand } = await import('./commands/plan.js');
    setExit(await planCommand(options.file, options as PlanOptions, io));
  });

  withConnection(
    program
      .command('apply')
      .description('plan, then execute in one transaction under a per-database advisory lock')
      .requiredOption('-f, --file <file>', 'policy content or PostgresPolicy manifest; - for stdin')
      .addOption(modeOption())
      .addOption(formatOption())
      .option('--rotate-passwords', 'set every managed password again (the CLI keeps no applied versions)')
      .addHelpText('after', PASSWORD_HELP)
      .option('-y, --yes', 'apply without asking (required when not running in a terminal)')
      .option(
        '--expect-digest <digest>',
        'refuse unless the recomputed changeDigest equals this',
        digestArgument,
      )
      .option('--show-generated', 'print generated passwords once to stderr'),
  ).action(async (options: RawOptions) => {
    const { applyCommand } = await import('./commands/apply.js');
    setExit(await applyCommand(options.file, options as ApplyOptions, io));
  });
}

/** `candidate diff`: the plan recorded for a candidate in the cluster (NAME), or planned here (-f). */
export function registerCandidateDiff(candidate: Command, io: CliIo, setExit: (code: number) => void): void {
  withConnection(
    kubeFlags(
      candidate
        .command('diff [candidate]')
        .description(
          'what a candidate changes, and its content digest; exit 0 none, 2 changes. With NAME: the plan the service recorded for it (cluster); with -f: planned here against --database-url (offline)',
        )
        .option('-f, --file <file>', 'PostgresPolicyCandidate manifest; - for stdin (offline)')
        .addOption(modeOption())
        .addOption(formatOption())
        .option('--rotate-passwords', 'plan every managed password as set again')
        .addHelpText(
          'after',
          '\nExample:\n  kubectl rolepolicy candidate diff shop-5d41402abc4b -n shop\n  rolepolicy candidate diff -f candidate.yaml --database-url "$DATABASE_URL"\n',
        ),
      { output: false, usage: false },
    ),
  ).action(async (name: string | undefined, options: RawOptions & ClusterFlags) => {
    if (name !== undefined) {
      if (options.file !== undefined)
        throw new CliError('candidate diff: give either NAME or -f FILE, not both');
      const [{ clusterContext }, { candidateClusterDiffCommand }] = await Promise.all([
        import('./cluster/context.js'),
        import('./cluster/candidate-commands.js'),
      ]);
      setExit(await candidateClusterDiffCommand(clusterContext(options, io), name));
      return;
    }
    if (options.file === undefined) throw new CliError('candidate diff: needs a candidate NAME or -f FILE');
    const { candidateDiffCommand } = await import('./commands/candidate-diff.js');
    setExit(await candidateDiffCommand(options.file, options as PlanOptions, io));
  });
}

/** `review`: the review artifact of a plan, planned here (-f), stored by the planner (--plan), or as HTML (PLAN). */
export function registerReviewCommand(program: Command, io: CliIo, setExit: (code: number) => void): void {
  withConnection(
    program
      .command('review [plan]')
      .description(
        'write the review artifact (schema rolepolicy.review-artifact.v2) of the plan: findings, preflight, phases, role graph',
      )
      .option('-f, --file <file>', 'policy content or PostgresPolicy manifest; - for stdin')
      .option('--plan <name>', 'print the artifact the planner stored for this PostgresPolicyPlan instead')
      .option('-n, --namespace <namespace>', 'namespace of --plan')
      .option(
        '--kubeconfig <path>',
        'kubeconfig for --plan (default: $KUBECONFIG, in-cluster, ~/.kube/config)',
      )
      .addOption(modeOption())
      .addOption(
        new Option('--format <format>', 'output format').choices(['json', 'html', 'text']).default('text'),
      )
      .option('--commit <sha>', 'policy commit recorded in provenance')
      .option(
        '--target-label <name>',
        'human-readable target name (default: "<database> on <host>:<port>"; never a URL)',
      )
      .option('--captured-at <time>', 'RFC 3339 capture time (default: now)', timestampArgument)
      .option('--rotate-passwords', 'review as if every managed password were set again')
      .option('--context <name>', 'kubeconfig context (with PLAN)')
      .option('--as <user>', 'impersonate this user (with PLAN)')
      .option(
        '--output-file <path>',
        'with PLAN: where the HTML report goes (default <plan>-review.html; - for stdout)',
      )
      .option('--open', 'with PLAN: open the HTML report once written')
      .addHelpText(
        'after',
        '\nExample:\n  kubectl rolepolicy review shop-3f2c1e9a0b4d -n shop --open\n  rolepolicy review -f policy.yaml --database-url "$DATABASE_URL" --format html > review.html\n',
      ),
  ).action(
    async (
      positional: string | undefined,
      options: RawOptions &
        Partial<ReviewPlanOptions> &
        ClusterFlags & { outputFile?: string; open?: boolean },
      command: Command,
    ) => {
      if (positional !== undefined) {
        const [{ clusterContext }, { reviewCommand }] = await Promise.all([
          import('./cluster/context.js'),
          import('./cluster/plan-commands.js'),
        ]);
        const format = command.getOptionValueSource('format') === 'default' ? 'html' : options.format;
        setExit(
          await reviewCommand(clusterContext(options, io), positional, {
            format,
            file: options.outputFile,
            open: options.open,
          }),
        );
        return;
      }
      if (options.plan !== undefined) {
        if (options.file !== undefined)
          throw new CliError('review: use either -f FILE or --plan NAME, not both');
        if (options.namespace === undefined) throw new CliError('review: --plan needs -n NAMESPACE');
        const { reviewPlanCommand } = await import('./commands/review-plan.js');
        setExit(await reviewPlanCommand(options as ReviewPlanOptions, io));
        return;
      }
      if (options.file === undefined) throw new CliError('review: needs -f FILE or --plan NAME -n NAMESPACE');
      const { reviewCommand } = await import('./commands/review.js');
      setExit(await reviewCommand(options.file, options as ReviewOptions, io, () => new Date()));
    },
  );
}

/** `generate`: a PostgresPolicy describing the live access of the selected roles. */
export function registerGenerateCommand(program: Command, io: CliIo, setExit: (code: number) => void): void {
  withConnection(
    program
      .command('generate')
      .description('write a PostgresPolicy (YAML, stdout) describing the live access of the selected roles')
      .requiredOption(
        '--roles <glob>',
        'roles to describe (`*`, `?`; repeatable); pg_* and the bootstrap superuser are always left out',
        collect,
      )
      .option('--exclude <glob>', 'roles to leave out (repeatable)', collect, [])
      .addOption(
        new Option('--mode <mode>', 'reconciliation_mode of the generated policy')
          .choices(['additive', 'authoritative'])
          .default('additive'),
      )
      .option('--name <name>', 'metadata.name (default: from the database name)')
      .option('--namespace <namespace>', 'metadata.namespace')
      .option('--connection-secret <name>', 'Secret holding the connection URL (default: <name>-database)')
      .option('--suggest-profiles', 'fold per-schema roles with the same grants into profiles x schemas')
      .addHelpText(
        'after',
        `
Example:
  rolepolicy generate --database-url "$DATABASE_URL" --roles 'app_*' --exclude 'app_admin' \\
    --namespace shop --name shop --connection-secret shop-db > policy.yaml
  rolepolicy plan -f policy.yaml --mode authoritative   # expect: no changes`,
      ),
  ).action(async (options: GenerateCommandOptions) => {
    const { generateCommand } = await import('./commands/generate.js');
    setExit(await generateCommand(options, io));
  });
}
