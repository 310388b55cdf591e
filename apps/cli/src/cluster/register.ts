// Wires the cluster commands (`kubectl rolepolicy ...`, also `rolepolicy ...`) into the commander program:
// kubectl's connection flags on each, an example in every --help, usage errors as exit 2.
// Only the definitions load at startup: the API client (context.js, @kubernetes/client-node) and each
// command's module are imported by the action that needs them.
import { Command, CommanderError, Option } from 'commander';

import { EXIT, type CliIo } from '../io.js';
import type { ClusterContext, ClusterFlags } from './context.js';
import { OUTPUT_FORMATS } from './output-formats.js';

/** A usage error of a cluster command (unknown flag, missing argument, bad choice): exit 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

function usageExit(error: CommanderError): never {
  if (error.exitCode === 0) throw error;
  throw new UsageError(error.message);
}

function collect(value: string, previous: readonly string[]): string[] {
  return [...previous, value];
}

/**
 * kubectl's connection flags (and -A for listings), -o, and exit 2 on usage errors (`usage: false` keeps
 * the offline commands' exit 1, where 2 already means "changes pending").
 */
export function kubeFlags(
  command: Command,
  options: { list?: boolean; output?: boolean; usage?: boolean } = {},
): Command {
  command
    .option('-n, --namespace <namespace>', "namespace (default: the context's namespace, else default)")
    .option('--kubeconfig <path>', 'kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)')
    .option('--context <name>', 'kubeconfig context to use')
    .option('--as <user>', 'impersonate this user (the API checks that you may)')
    .option('--as-group <group>', 'impersonate this group (with --as; once)', collect, []);
  if (options.list) command.option('-A, --all-namespaces', 'list across every namespace');
  if (options.output !== false) {
    command.addOption(new Option('-o, --output <format>', 'output format').choices(OUTPUT_FORMATS));
  }
  return options.usage === false ? command : command.exitOverride(usageExit);
}

function waitFlags(command: Command, what: string): Command {
  return command
    .option('--wait', `wait until ${what}`)
    .option('--timeout <duration>', 'how long --wait waits (e.g. 90s, 5m)', '5m');
}

function example(command: Command, ...lines: string[]): Command {
  return command.addHelpText('after', `\nExample:\n${lines.map((l) => `  ${l}`).join('\n')}\n`);
}

/** Checks -o and connects (context.js loads the API client on first use). */
function connector(io: CliIo): Context {
  return async (flags) => {
    const { clusterContext } = await import('./context.js');
    return clusterContext(flags, io);
  };
}

/** Adds the cluster commands to `program`; `setExit` receives each command's exit code. */
export function registerClusterCommands(program: Command, io: CliIo, setExit: (code: number) => void): void {
  const ctx = connector(io);

  registerPlanCommands(program, ctx, setExit);
  registerAccessCommands(program, ctx, setExit);

  example(
    waitFlags(
      kubeFlags(program.command('reconcile <policy>')).description(
        'ask the planner to reconcile a PostgresPolicy now (annotation rolepolicy.io/reconcile-requested-at)',
      ),
      'the planner handled it (Ready=True exits 0)',
    ),
    'kubectl rolepolicy reconcile shop -n shop --wait',
  ).action(async (policy: string, flags: ClusterFlags) => {
    const { reconcileCommand } = await import('./reconcile-command.js');
    setExit(await reconcileCommand(await ctx(flags), policy, flags));
  });

  example(
    kubeFlags(program.command('whoami'), { output: false }).description(
      'the identity decisions are recorded with (SelfSubjectReview, as kubectl auth whoami)',
    ),
    'kubectl rolepolicy whoami',
  ).action(async (flags: ClusterFlags) => {
    const { whoAmI } = await import('./identity.js');
    const me = await whoAmI((await ctx(flags)).cluster, io);
    io.stdout(
      `username: ${me.username}\n${me.uid ? `uid:      ${me.uid}\n` : ''}groups:   ${(me.groups ?? []).join(', ') || '(none)'}\nsource:   ${me.source === 'api' ? 'SelfSubjectReview' : 'kubeconfig (unverified)'}\n`,
    );
    setExit(EXIT.ok);
  });
}

type Context = (flags: ClusterFlags) => Promise<ClusterContext>;

/** `plans`, `approve PLAN`, `deny PLAN`: the plans waiting for a decision, and the decision. */
function registerPlanCommands(program: Command, ctx: Context, setExit: (code: number) => void): void {
  example(
    kubeFlags(program.command('plans'), { list: true })
      .description('plans waiting for a decision, with their change counts and warnings')
      .option('--all', 'every plan, not only those waiting for a decision'),
    'kubectl rolepolicy plans -n shop',
  ).action(async (flags: ClusterFlags & { all?: boolean }) => {
    const { plansCommand } = await import('./plan-commands.js');
    setExit(await plansCommand(await ctx(flags), flags.all === true));
  });

  for (const decision of ['Approved', 'Denied'] as const) {
    const verb = decision === 'Approved' ? 'approve' : 'deny';
    example(
      waitFlags(
        kubeFlags(program.command(`${verb} <plan>`))
          .description(
            `${verb} a PostgresPolicyPlan: shows its summary, then writes ${decision}=True and decidedBy (your identity) in one status update`,
          )
          .option('-m, --message <text>', 'the decision message (e.g. a ticket)'),
        decision === 'Approved' ? 'the plan is Applied' : 'the plan is Rejected',
      ),
      `kubectl rolepolicy ${verb} shop-3f2c1e9a0b4d -n shop -m "CHG-1234"${decision === 'Approved' ? ' --wait' : ''}`,
    ).action(async (plan: string, flags: ClusterFlags & { message?: string }) => {
      const { decidePlanCommand } = await import('./plan-commands.js');
      setExit(await decidePlanCommand(await ctx(flags), plan, decision, flags));
    });
  }
}

/** `access request|approve|deny|list`: time-boxed access through EphemeralAccessRequests. */
function registerAccessCommands(program: Command, ctx: Context, setExit: (code: number) => void): void {
  const access = example(
    program.command('access').description('time-boxed access: EphemeralAccessRequests'),
    'kubectl rolepolicy access request orders-read --subject alice --for 30m --justification "INC-42"',
    'kubectl rolepolicy access list',
    'kubectl rolepolicy access approve orders-read-x7k2p --wait',
  ).exitOverride(usageExit);
  example(
    waitFlags(
      kubeFlags(access.command('request <access-policy>'))
        .description('ask for the bundle of an EphemeralAccessPolicy for a role, for a bounded time')
        .requiredOption('--subject <role>', 'the existing database role that receives the memberships')
        .option('--for <duration>', "how long (e.g. 30m, 1h30m; default: the policy's defaultDuration)")
        .option('--justification <text>', 'why (required when the policy says so)')
        .option('--name <name>', 'name of the request (default: <access-policy>-<random>)'),
      'the request awaits approval or is Active',
    ),
    'kubectl rolepolicy access request orders-read --subject alice --for 30m --justification "INC-42" --wait',
  ).action(async (policy: string, flags: ClusterFlags & Record<string, string | undefined>) => {
    const { requestAccessCommand } = await import('./access-commands.js');
    setExit(
      await requestAccessCommand(await ctx(flags), policy, {
        subject: flags['subject'] ?? '',
        for: flags['for'],
        justification: flags['justification'],
        name: flags['name'],
        wait: flags.wait,
        timeout: flags.timeout,
      }),
    );
  });
  for (const decision of ['Approved', 'Denied'] as const) {
    const verb = decision === 'Approved' ? 'approve' : 'deny';
    example(
      waitFlags(
        kubeFlags(access.command(`${verb} <request>`))
          .description(
            decision === 'Approved'
              ? 'approve an access request, bound to its own resolved bundle hash and granted duration'
              : 'deny an access request (also ends access already granted)',
          )
          .option('-m, --message <text>', 'the decision message'),
        decision === 'Approved' ? 'the access is Active' : 'the request is Denied',
      ),
      `kubectl rolepolicy access ${verb} orders-read-x7k2p -n shop${decision === 'Approved' ? ' --wait' : ' -m "not on call"'}`,
    ).action(async (request: string, flags: ClusterFlags & { message?: string }) => {
      const { decideRequestCommand } = await import('./access-commands.js');
      setExit(await decideRequestCommand(await ctx(flags), request, decision, flags));
    });
  }
  example(
    kubeFlags(access.command('list'), { list: true }).description(
      'access requests with their phase, duration and deadline',
    ),
    'kubectl rolepolicy access list -n shop',
  ).action(async (flags: ClusterFlags) => {
    const { listAccessCommand } = await import('./access-commands.js');
    setExit(await listAccessCommand(await ctx(flags)));
  });
}

/** The `candidate` subcommands that talk to the cluster (`candidate diff` is wired by database-commands.ts). */
export function registerCandidateCommands(
  candidate: Command,
  io: CliIo,
  setExit: (code: number) => void,
): void {
  const ctx = connector(io);
  example(
    kubeFlags(candidate.command('create <policy>'))
      .description('propose policy content for a PostgresPolicy (the service plans it for review)')
      .requiredOption(
        '-f, --file <file>',
        'policy content, a PostgresPolicy or a PostgresPolicyCandidate; - for stdin',
      )
      .option('--name <name>', 'candidate name (default: <policy>-<12 hex of the content digest>)')
      .option('--replaces <candidate>', 'an earlier candidate this one supersedes'),
    'kubectl rolepolicy candidate create shop -f shop-next.yaml -n shop',
  ).action(
    async (policy: string, flags: ClusterFlags & { file: string; name?: string; replaces?: string }) => {
      const { candidateCreateCommand } = await import('./candidate-commands.js');
      setExit(await candidateCreateCommand(await ctx(flags), policy, flags));
    },
  );
  example(
    kubeFlags(candidate.command('list'), { list: true }).description(
      'candidates with phase, readiness and plan',
    ),
    'kubectl rolepolicy candidate list -n shop',
  ).action(async (flags: ClusterFlags) => {
    const { candidateListCommand } = await import('./candidate-commands.js');
    setExit(await candidateListCommand(await ctx(flags)));
  });
  example(
    kubeFlags(candidate.command('status <candidate>')).description(
      'a candidate in detail: conditions, digests, its plan and the next step',
    ),
    'kubectl rolepolicy candidate status shop-5d41402abc4b -n shop',
  ).action(async (name: string, flags: ClusterFlags) => {
    const { candidateStatusCommand } = await import('./candidate-commands.js');
    setExit(await candidateStatusCommand(await ctx(flags), name));
  });
}
