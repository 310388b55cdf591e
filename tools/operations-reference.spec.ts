// docs/operations.md cannot drift from the code: its configuration reference is exactly what the env
// specs, the metric registrations and the condition literals render to today.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { format, resolveConfig } from 'prettier';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import {
  BEGIN,
  END,
  conditionReasons,
  reasonLiterals,
  registeredMetrics,
  renderReference,
} from './operations-reference.js';

const docPath = fileURLToPath(new URL('../docs/operations.md', import.meta.url));
const doc = readFileSync(docPath, 'utf8');

function block(text: string): string {
  return text.slice(text.indexOf(BEGIN), text.indexOf(END) + END.length);
}

describe('docs/operations.md configuration reference', () => {
  it('is what the code renders (run `npm run gen:operations` after changing variables or metrics)', async () => {
    const rendered = await format(renderReference(), {
      ...(await resolveConfig(docPath)),
      parser: 'markdown',
    });
    expect(block(doc)).toBe(block(rendered));
  });

  it('lists the variables, metrics and reasons the services really have', () => {
    const reference = block(doc);
    for (const name of [
      'NATS_URL',
      'LEASE_NAME',
      'PLANNER_RETAIN_APPLIED',
      'INSPECT_MAX_TARGET_POOLS',
      'REDIS_URL',
    ]) {
      expect(reference).toContain(`\`${name}\``);
    }
    const metrics = registeredMetrics().map((m) => m.name);
    expect(metrics).toEqual(
      expect.arrayContaining([
        'rp_messages_handled_total',
        'rp_planner_reconcile_seconds',
        'rp_jetstream_consumer_pending_messages',
        'rp_plans_pending_approval_oldest_seconds',
        'rp_k8s_gateway_leader',
      ]),
    );
    expect(conditionReasons()).toEqual(
      expect.arrayContaining(['Reconciled', 'PendingApproval', 'Superseded']),
    );
  });

  it('lists every condition reason literal of the planner, the executor and the plan lifecycle', () => {
    const listed = new Set(conditionReasons());
    expect(reasonLiterals().filter((r) => !listed.has(r))).toEqual([]);
  });

  it('lists no condition reason the code no longer writes', () => {
    const code = ['apps/planner/src', 'apps/executor/src', 'libs/plan-lifecycle/src']
      .flatMap((dir) => sourcesUnder(fileURLToPath(new URL(`../${dir}`, import.meta.url))))
      .filter((file) => !file.endsWith('condition-reasons.ts'))
      .map((file) => readFileSync(file, 'utf8'))
      .join('\n');
    expect(conditionReasons().filter((r) => !code.includes(`'${r}'`))).toEqual([]);
  });
});

function sourcesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'test-support' ? [] : sourcesUnder(path);
    return /(?<!\.spec|\.int-spec)\.ts$/.test(entry.name) ? [path] : [];
  });
}
