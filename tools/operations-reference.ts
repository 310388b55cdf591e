// The configuration reference of docs/operations.md, rendered from the code: every environment variable
// from the services' env specs, every metric registered in the code (name, type, help), and the condition
// reasons the planner and executor write (libs/plan-lifecycle's CONDITION_REASONS). `npm run gen:operations`
// rewrites the block; tools/operations-reference.spec.ts fails when the document and the code differ.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CONDITION_REASONS } from '@rolepolicy/plan-lifecycle';
import { baseEnvSpec, type EnvSpec } from '@rolepolicy/runtime';
import { k8sGatewayEnvSpec } from '../apps/k8s-gateway/src/config.js';
import { inspectorEnvSpec } from '../apps/inspector/src/config.js';
import { plannerEnvSpec } from '../apps/planner/src/config.js';
import { executorEnvSpec } from '../apps/executor/src/config.js';
import { accessSchedulerEnvSpec } from '../apps/access-scheduler/src/config.js';

// The repository root, also when this runs compiled from dist/tools.
const ROOT = fileURLToPath(new URL('../', import.meta.url)).replace(/\/dist\/$/, '/');
export const BEGIN = '<!-- BEGIN GENERATED configuration reference: npm run gen:operations -->';
export const END = '<!-- END GENERATED configuration reference -->';

const SERVICES: readonly (readonly [string, EnvSpec])[] = [
  ['k8s-gateway', k8sGatewayEnvSpec],
  ['inspector', inspectorEnvSpec],
  ['planner', plannerEnvSpec],
  ['executor', executorEnvSpec],
  ['access-scheduler', accessSchedulerEnvSpec],
];

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
const code = (text: string) => (text === '' ? 'empty' : `\`${text}\``);

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!['node_modules', 'test-support', 'testing'].includes(entry.name)) out.push(...sourceFiles(path));
    } else if (entry.name.endsWith('.ts') && !/\.(int-)?spec\.ts$/.test(entry.name)) {
      out.push(path);
    }
  }
  return out;
}

/** Metrics registered in the deployed code: `name: '…', help: '…'` after `new Counter|Gauge|Histogram`. */
export function registeredMetrics(): { name: string; type: string; help: string; file: string }[] {
  const out: { name: string; type: string; help: string; file: string }[] = [];
  for (const file of [...sourceFiles(join(ROOT, 'apps')), ...sourceFiles(join(ROOT, 'libs'))]) {
    const text = readFileSync(file, 'utf8');
    const pattern =
      /(new (Counter|Gauge|Histogram|Summary)\b|consumerGauge)[\s\S]{0,120}?name: '([a-z0-9_:]+)',\s*help:\s*'((?:[^'\\]|\\.)*)'/g;
    for (const m of text.matchAll(pattern)) {
      const type = m[1] === 'consumerGauge' ? 'gauge' : m[2]!.toLowerCase();
      out.push({ name: m[3]!, type, help: m[4]!, file: relative(ROOT, file) });
    }
  }
  return out.sort((a, b) => a.name.localeCompare(b.name));
}

/** The condition reasons the planner and the executor write: the one list in libs/plan-lifecycle. */
export function conditionReasons(): string[] {
  return [...CONDITION_REASONS];
}

/**
 * Reason literals in the planner's, the executor's and the plan lifecycle's code (`cond('False', 'X'`,
 * `reason: 'X'`, `X_REASON = 'X'`, `_REASONS` sets), to check CONDITION_REASONS against.
 */
export function reasonLiterals(): string[] {
  const reasons = new Set<string>();
  for (const file of [
    ...sourceFiles(join(ROOT, 'apps/planner/src')),
    ...sourceFiles(join(ROOT, 'apps/executor/src')),
    ...sourceFiles(join(ROOT, 'libs/plan-lifecycle/src')),
  ]) {
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(
      /cond\(\s*'(?:True|False|Unknown)',\s*'([A-Z][A-Za-z]+)'|reason: '([A-Z][A-Za-z]+)'|_REASONS? = (?:new Set\(\[)?'([A-Z][A-Za-z]+)'/g,
    )) {
      reasons.add((m[1] ?? m[2] ?? m[3])!);
    }
    for (const m of text.matchAll(/_REASONS = new Set\(\[([^\]]*)\]/g)) {
      for (const r of m[1]!.matchAll(/'([A-Z][A-Za-z]+)'/g)) reasons.add(r[1]!);
    }
  }
  return [...reasons].sort();
}

function envTable(spec: EnvSpec, names: readonly string[], defaults: (name: string) => string): string[] {
  return [
    '| variable | default | meaning |',
    '| --- | --- | --- |',
    ...names.map((name) => `| \`${name}\` | ${defaults(name)} | ${cell(spec[name]!.doc)} |`),
  ];
}

/** The generated block, markers included. */
export function renderReference(): string {
  const shared = baseEnvSpec(1);
  const sharedNames = Object.keys(shared);
  const lines: string[] = [BEGIN, '', '### Environment variables', ''];
  lines.push('Every service reads these (`HTTP_PORT` defaults differ per service, below):', '');
  lines.push(
    ...envTable(shared, sharedNames, (n) =>
      n === 'HTTP_PORT'
        ? 'per service'
        : shared[n as keyof typeof shared].default === undefined
          ? 'required'
          : code(shared[n as keyof typeof shared].default!),
    ),
  );
  for (const [service, spec] of SERVICES) {
    const own = Object.keys(spec).filter((n) => !sharedNames.includes(n));
    lines.push('', `**${service}** (\`HTTP_PORT\` default ${code(spec['HTTP_PORT']!.default!)})`, '');
    if (own.length === 0) lines.push('No variables of its own.');
    else
      lines.push(
        ...envTable(spec, own, (n) =>
          spec[n]!.default === undefined ? 'required' : code(spec[n]!.default!),
        ),
      );
  }
  lines.push('', '### Metrics', '');
  lines.push(
    'Every series carries the label `service`. Besides these, each service exports prom-client’s default',
    'process and Node.js metrics (`process_*`, `nodejs_*`); the event-loop delay histogram behind',
    '`nodejs_eventloop_lag_*` samples every 100 ms (`EVENT_LOOP_SAMPLE_MS`, libs/runtime/src/metrics.ts), so an',
    'idle service reads about 0.1 s there: the interval between samples, not a delay.',
    '',
    '| metric | type | meaning | defined in |',
    '| --- | --- | --- | --- |',
    ...registeredMetrics().map((m) => `| \`${m.name}\` | ${m.type} | ${cell(m.help)} | \`${m.file}\` |`),
  );
  lines.push('', '### Condition reasons', '');
  lines.push(
    'Reasons the planner and the executor write into policy and plan conditions (`CONDITION_REASONS` in',
    '`libs/plan-lifecycle/src/condition-reasons.ts`; a failure carries its own message):',
    '',
    conditionReasons()
      .map((r) => `\`${r}\``)
      .join(', ') + '.',
    '',
    END,
  );
  return lines.join('\n');
}
