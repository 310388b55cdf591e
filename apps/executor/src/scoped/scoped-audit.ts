// The audit records of a committed scoped execution (docs/audit.md): `membership.granted` for an Activate,
// `membership.revoked` for a Revoke or a Sweep, naming the edges that changed (not the ones kept).
import type { CatalogConnection } from '@rolepolicy/catalog';
import { membershipRecords, SWEEP_BUNDLE, type ScopedExecuteRequestV1 } from '@rolepolicy/contracts';
import type { Change } from '@rolepolicy/policy';
import { auditInstance, type AuditSink } from '@rolepolicy/runtime';
import { auditDatabase } from '../execution/audit.js';

/** Writes the records of `changes`, committed for `message` in `target`. */
export function auditScoped(
  audit: AuditSink,
  message: ScopedExecuteRequestV1,
  changes: readonly Change[],
  target: CatalogConnection['target'],
): void {
  const sweep = message.operation === 'Sweep';
  const records = membershipRecords({
    at: new Date().toISOString(),
    operation: message.operation,
    idempotencyKey: message.idempotencyKey,
    namespace: message.policy.namespace,
    request: sweep ? null : { name: message.request.name, uid: message.request.uid ?? null },
    plan: sweep ? null : { name: message.plan.name, uid: message.plan.uid ?? null },
    policy: { name: message.policy.name, uid: message.policy.uid ?? null },
    bundleHash: message.bundleHash === SWEEP_BUNDLE ? null : message.bundleHash,
    changes,
    database: auditDatabase(target, null),
    executor: auditInstance(),
  });
  for (const record of records) audit.write(record);
}
