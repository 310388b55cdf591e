// The executor's audit records (docs/audit.md): `plan.applied` right after a commit, `plan.failed` for a
// Failed outcome. Built from identities only: the plan's changes by name, the target's address, the
// result's reason and SQLSTATE; never the statements, the message, a password source or the connection URL.
import type { CatalogConnection } from '@rolepolicy/catalog';
import {
  planAppliedRecord,
  planFailedRecord,
  type AuditDatabase,
  type ExecuteRequestV2,
  type ExecuteResultV1,
} from '@rolepolicy/contracts';
import { summarise, type Change } from '@rolepolicy/policy';
import { auditInstance } from '@rolepolicy/runtime';

/** The database of a record: the target's address and name, and the reference the digest binds. */
export function auditDatabase(target: CatalogConnection['target'], reference: string | null): AuditDatabase {
  return { host: target.host, port: target.port, name: target.database, target: reference };
}

/** `plan.applied` of a committed request: `count` statements ran for `changes` under `digest`. */
export function appliedRecord(
  request: ExecuteRequestV2,
  digest: string,
  changes: readonly Change[],
  count: number,
  target: CatalogConnection['target'],
) {
  return planAppliedRecord({
    at: new Date().toISOString(),
    plan: request.plan,
    policy: request.policy,
    digest,
    idempotencyKey: request.idempotencyKey,
    summary: summarise(changes),
    changes,
    statementCount: count,
    database: auditDatabase(target, request.target),
    executor: auditInstance(),
  });
}

/** `plan.failed` of a Failed result (its reason, error class and SQLSTATE). */
export function failedRecord(request: ExecuteRequestV2, result: ExecuteResultV1) {
  return planFailedRecord({
    at: result.reportedAt,
    source: 'executor',
    plan: request.plan,
    policy: request.policy,
    digest: result.approvedDigest,
    key: request.idempotencyKey,
    reason: result.reason,
    errorClass: result.errorClass ?? null,
    sqlState: result.lastError?.sqlState ?? null,
    database: null,
    executor: auditInstance(),
  });
}
