// deploy/monitoring/: `promtool check rules` accepts the alerting rules (and every dashboard query,
// checked as a recording rule), `promtool test rules` passes the alerts' unit tests, and every metric a
// rule or a panel reads is exported on /metrics by some service of the running stack (access-controlled
// NATS, so reading the JetStream figures must stay within each service's permissions).
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { startStack, type Stack } from '../../e2e/stack.js';
import { exportedSeries, metricNames } from './promql-metrics.js';
import { REPO_ROOT, run } from './render.js';

const RULES = join(REPO_ROOT, 'deploy/monitoring/rolepolicy-alerts.yaml');
const RULE_TESTS = join(REPO_ROOT, 'deploy/monitoring/rolepolicy-alerts.test.yaml');
const DASHBOARD = join(REPO_ROOT, 'deploy/monitoring/rolepolicy-dashboard.json');
const PROMTOOL = process.env['PROMTOOL'] ?? 'promtool';

// Metrics a rule or panel may use before a service exports them (none now: every one must be exported).
const PENDING_METRICS: ReadonlySet<string> = new Set<string>();

type RuleFile = { groups: { name: string; rules: { alert?: string; record?: string; expr: string }[] }[] };
type Dashboard = { panels: { title: string; targets?: { expr: string }[] }[] };

async function queries(): Promise<{ where: string; expr: string }[]> {
  const rules = parse(await readFile(RULES, 'utf8')) as RuleFile;
  const dashboard = JSON.parse(await readFile(DASHBOARD, 'utf8')) as Dashboard;
  return [
    ...rules.groups.flatMap((g) =>
      g.rules.map((r) => ({ where: `rule ${r.alert ?? r.record}`, expr: r.expr })),
    ),
    ...dashboard.panels.flatMap((p) =>
      (p.targets ?? []).map((t) => ({ where: `panel "${p.title}"`, expr: t.expr })),
    ),
  ];
}

describe('promtool', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rp-promtool-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('checks the alerting rules', async () => {
    const out = await run(PROMTOOL, ['check', 'rules', RULES]);
    expect(out).toMatch(/SUCCESS: \d+ rules found/);
  });

  it('passes the alert unit tests (promtool test rules)', async () => {
    const out = await run(PROMTOOL, ['test', 'rules', RULE_TESTS]);
    expect(out).toContain('SUCCESS');
  });

  it('checks every dashboard query as PromQL (wrapped in recording rules)', async () => {
    const dashboard = JSON.parse(await readFile(DASHBOARD, 'utf8')) as Dashboard;
    const rules = dashboard.panels.flatMap((p, i) =>
      (p.targets ?? []).map((t, j) => ({ record: `rolepolicy:panel_${i}_${j}`, expr: t.expr })),
    );
    const file = join(dir, 'panels.yaml');
    await writeFile(file, stringify({ groups: [{ name: 'panels', rules }] }));
    expect(await run(PROMTOOL, ['check', 'rules', file])).toContain(`SUCCESS: ${rules.length} rules found`);
  });

  it('is not a formality: a broken expression is refused', async () => {
    const file = join(dir, 'broken.yaml');
    await writeFile(
      file,
      stringify({ groups: [{ name: 'x', rules: [{ alert: 'X', expr: 'sum(rate(x[5m])' }] }] }),
    );
    await expect(run(PROMTOOL, ['check', 'rules', file])).rejects.toThrow(/parse error/);
  });
});

describe('metrics coverage against the running stack', () => {
  let stack: Stack;
  const exported = new Map<string, Set<string>>();

  beforeAll(async () => {
    stack = await startStack({ namespace: 'monitoring', natsAccessControl: true });
    await stack.waitReady();
    for (const service of stack.services) {
      const text = await (await fetch(`${service.url}/metrics`)).text();
      exported.set(service.name, exportedSeries(text));
    }
  }, 60_000);

  // On the secured NATS a service's close has been seen to take over a minute (cause open, docs/next-steps).
  afterAll(async () => {
    await stack?.stop();
  }, 180_000);

  it('every metric a rule or a panel reads is exported by some service', async () => {
    const all = new Set([...exported.values()].flatMap((s) => [...s]));
    const missing: string[] = [];
    const used = new Set<string>();
    for (const { where, expr } of await queries()) {
      for (const name of metricNames(expr)) {
        used.add(name);
        if (!all.has(name) && !PENDING_METRICS.has(name)) missing.push(`${where}: ${name}`);
      }
    }
    expect(missing).toEqual([]);
    for (const pending of PENDING_METRICS) expect(used.has(pending)).toBe(true);
    expect(used.size).toBeGreaterThan(10);
  });

  it("each service reports its own consumers' JetStream figures within its NATS permissions", async () => {
    const executor = stack.services.find((s) => s.name === 'executor')!;
    const text = await (await fetch(`${executor.url}/metrics`)).text();
    expect(text).toMatch(
      /^rp_jetstream_consumer_pending_messages\{stream="RP_EXECUTE",consumer="executor-execute",service="executor"\} \d+$/m,
    );
    expect(text).toMatch(
      /^rp_jetstream_dead_letter_messages\{stream="RP_DEAD_LETTER",service="executor"\} \d+$/m,
    );
    expect(text).toMatch(/^rp_jetstream_scrape_errors_total\{service="executor"\} 0$/m);
    expect(await stack.natsAccess!.violations()).toEqual([]);
  });
});
