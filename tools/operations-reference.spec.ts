// docs/operations.md cannot drift from the code: its configuration reference is exactly what the env
// specs, the metric registrations and the condition literals render to today.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { format, resolveConfig } from 'prettier';
import { BEGIN, END, conditionReasons, registeredMetrics, renderReference } from './operations-reference.js';

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
});
