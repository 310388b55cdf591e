// `npm run bench -- cli-start`: CPU time of one CLI process, start to exit, for --help, validate, plan and
// generate (`rolepolicy`, bin/rolepolicy.mjs on dist/) and plans and whoami (`kubectl-rolepolicy`,
// bin/kubectl-rolepolicy.mjs, against the API emulator), and the same from source through the test
// children's TypeScript hooks (cli-entry.ts / plugin-entry.ts). Floors measured in the same run: `node -e ''`
// and a bare import of each command's heavy dependencies with the same loader (dist/node_modules or the
// hooks) -> bench/results/cli-start.json. `--root DIR` measures another checkout (e.g. the commit before)
// with this bench; `--runs N` (default 7). CPU is user+system of the reaped child (/proc), not wall time:
// the machine is shared.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { startEmulator } from '@rolepolicy/testing';

import { benchCpuSeconds } from './cpu-time.js';
import { BENCH_ADMIN_URL, databaseUrl, median, runOn, writeResult } from './pg-bench-support.js';

const DATABASE = 'rolepolicy_bench_cli_start';
const ROLE_PREFIX = 'rp_bench_cli_';
const HERE = path.dirname(fileURLToPath(import.meta.url));

type Case = {
  readonly name: string;
  readonly plugin: boolean;
  readonly args: readonly string[];
  /** The command's heavy dependencies: the floor imports them and nothing else. */
  readonly imports: readonly string[];
  /** Exit codes that mean the command did its work (plan: 2 = changes pending). */
  readonly ok: readonly number[];
};

function cases(policyFile: string): Case[] {
  return [
    { name: '--help', plugin: false, args: ['--help'], imports: ['commander'], ok: [0] },
    {
      name: 'validate',
      plugin: false,
      args: ['validate', '-f', policyFile],
      imports: ['@rolepolicy/policy', 'yaml'],
      ok: [0],
    },
    {
      name: 'plan',
      plugin: false,
      args: ['plan', '-f', policyFile],
      imports: ['@rolepolicy/catalog', '@rolepolicy/policy', '@rolepolicy/review'],
      ok: [0, 2],
    },
    {
      name: 'generate',
      plugin: false,
      args: ['generate', '--roles', `${ROLE_PREFIX}*`],
      imports: ['@rolepolicy/catalog', '@rolepolicy/policy'],
      ok: [0],
    },
    {
      name: 'kubectl-rolepolicy plans',
      plugin: true,
      args: ['plans', '-A'],
      imports: ['@kubernetes/client-node', '@rolepolicy/kube', '@rolepolicy/review'],
      ok: [0],
    },
    {
      name: 'kubectl-rolepolicy whoami',
      plugin: true,
      args: ['whoami'],
      imports: ['@kubernetes/client-node', '@rolepolicy/kube'],
      ok: [0],
    },
  ];
}

type Entry = 'dist' | 'source';

/** The node arguments that start the CLI (or the floor's import) of `root` the way `entry` does. */
function command(root: string, entry: Entry, plugin: boolean): string[] {
  if (entry === 'source') {
    const hooks = path.join(root, 'libs/testing/src/sandbox/ts-register.mjs');
    return [
      '--no-warnings',
      '--import',
      hooks,
      path.join(root, `apps/cli/src/${plugin ? 'plugin' : 'cli'}-entry.ts`),
    ];
  }
  return [path.join(root, `bin/${plugin ? 'kubectl-' : ''}rolepolicy.mjs`)];
}

/** node arguments importing `modules` with the loader `entry` uses (hooks from source; dist/node_modules). */
function floorCommand(root: string, entry: Entry, modules: readonly string[]): string[] {
  const script = modules.map((m) => `await import(${JSON.stringify(m)});`).join('');
  if (entry === 'source') {
    const hooks = path.join(root, 'libs/testing/src/sandbox/ts-register.mjs');
    return ['--no-warnings', '--import', hooks, '--input-type=module', '-e', script];
  }
  const linked = existsSync(path.join(root, 'dist/node_modules/@rolepolicy'));
  const loader = linked ? [] : ['--import', path.join(root, 'tools/register-aliases.mjs')];
  return ['--no-warnings', ...loader, '--input-type=module', '-e', script];
}

/** Where a floor's `-e` runs: bare specifiers resolve from there (dist/node_modules holds @rolepolicy/*). */
function floorCwd(root: string, entry: Entry): string {
  return entry === 'dist' ? path.join(root, 'dist') : root;
}

/**
 * CPU seconds (user+system) of one child process running `node args`, and its exit code. Asynchronous:
 * the emulator answering the plugin runs in this process.
 */
async function cpuOf(
  args: readonly string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
): Promise<{ cpu: number; code: number; stderr: string }> {
  const before = benchCpuSeconds().children;
  const child = spawn(process.execPath, args, { cwd, env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const [code, signal] = (await once(child, 'close')) as [number | null, string | null];
  if (code === null) throw new Error(`node ${args.join(' ')} ended by ${signal}: ${stderr}`);
  return { cpu: benchCpuSeconds().children - before, code, stderr };
}

async function medianMs(
  args: readonly string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
  runs: number,
  ok: readonly number[],
): Promise<number> {
  const samples: number[] = [];
  for (let run = 0; run <= runs; run++) {
    const { cpu, code, stderr } = await cpuOf(args, cwd, env);
    if (!ok.includes(code)) throw new Error(`node ${args.join(' ')} exited ${code}: ${stderr}`);
    // The first run fills the page cache (and the hooks' compile cache): not counted.
    if (run > 0) samples.push(cpu * 1000);
  }
  return Math.round(median(samples));
}

async function prepareDatabase(): Promise<string> {
  await runOn(BENCH_ADMIN_URL, `DROP DATABASE IF EXISTS ${DATABASE} WITH (FORCE)`);
  await runOn(BENCH_ADMIN_URL, `CREATE DATABASE ${DATABASE}`);
  const url = databaseUrl(DATABASE);
  await runOn(
    url,
    `DO $$ BEGIN
       IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '${ROLE_PREFIX}app') THEN
         CREATE ROLE ${ROLE_PREFIX}app LOGIN;
       END IF;
     END $$;
     CREATE SCHEMA ${ROLE_PREFIX}s;
     GRANT USAGE ON SCHEMA ${ROLE_PREFIX}s TO ${ROLE_PREFIX}app;`,
  );
  return url;
}

async function dropDatabase(): Promise<void> {
  await runOn(BENCH_ADMIN_URL, `DROP DATABASE IF EXISTS ${DATABASE} WITH (FORCE)`);
  await runOn(BENCH_ADMIN_URL, `DROP ROLE IF EXISTS ${ROLE_PREFIX}app`);
}

function option(args: readonly string[], name: string): string | undefined {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : undefined;
}

/** Runs the CLI start-up benchmark. */
export async function runCliStartBench(_script: string, args: readonly string[]): Promise<void> {
  const root = path.resolve(option(args, '--root') ?? path.resolve(HERE, '..', '..'));
  const runs = Number(option(args, '--runs') ?? 7);
  const loadBefore = loadavg();
  const dir = mkdtempSync(path.join(tmpdir(), 'rp-cli-start-'));
  const policyFile = path.join(dir, 'policy.yaml');
  writeFileSync(
    policyFile,
    `roles:\n  - name: ${ROLE_PREFIX}app\n    login: true\n  - name: ${ROLE_PREFIX}reader\nschemas:\n  - name: ${ROLE_PREFIX}s\ngrants:\n  - role: ${ROLE_PREFIX}reader\n    privileges: [USAGE]\n    object: { type: schema, name: ${ROLE_PREFIX}s }\n`,
  );
  const url = await prepareDatabase();
  const emulator = await startEmulator({ crdDir: path.join(root, 'deploy/crds') });
  const env = {
    PATH: process.env['PATH'] ?? '',
    HOME: dir,
    DATABASE_URL: url,
    KUBECONFIG: emulator.kubeconfigPath,
  };
  try {
    const nodeMs = await medianMs(['-e', ''], root, env, runs, [0]);
    const rows = [];
    for (const c of cases(policyFile)) {
      for (const entry of ['dist', 'source'] as const) {
        const cpuMs = await medianMs(command(root, entry, c.plugin).concat(c.args), root, env, runs, c.ok);
        const floor = floorCommand(root, entry, c.imports);
        const importFloorMs = await medianMs(floor, floorCwd(root, entry), env, runs, [0]);
        rows.push({
          command: c.name,
          entry,
          cpuMs,
          importFloorMs,
          nodeMs,
          floorImports: c.imports.join(' '),
        });
      }
    }
    const report = {
      benchmark: 'cli-start',
      description:
        'CPU (user+system, median) of one CLI process start to exit; dist = bin/*.mjs on the build, source = the ' +
        "tests' children (TypeScript hooks, compile cache warm); floors: node -e '' and a bare import of the " +
        "command's heavy dependencies with the same loader",
      node: process.version,
      root,
      runs,
      results: rows,
      loadAverageBefore: loadBefore.map((n) => Math.round(n * 10) / 10),
      loadAverageAfter: loadavg().map((n) => Math.round(n * 10) / 10),
    };
    console.table(rows.map(({ floorImports: _imports, ...row }) => row));
    writeResult(option(args, '--name') ?? 'cli-start', report);
  } finally {
    await emulator.stop();
    await dropDatabase();
    rmSync(dir, { recursive: true, force: true });
  }
}
