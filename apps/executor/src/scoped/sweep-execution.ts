// The Sweep of one target policy (ADR 0020, "The sweep"), asked by the access-scheduler at each rebuild:
// under the database lock, revoke every live edge of a bundle role to a role of the policy that the policy
// does not declare and no anchored request holds. Everything that decides is read here, not from the message.
import {
  executeUnderLock,
  inspect,
  openConnection,
  withRedaction,
  type CatalogConnection,
  type ConnectionSpec,
  type DatabaseTls,
  type LockedDecision,
  type RoleLockSessions,
  type WorkloadIdentity,
} from '@rolepolicy/catalog';
import type { ScopedExecuteRequestV1 } from '@rolepolicy/contracts';
import type { Connection } from '@rolepolicy/kube';
import {
  anchoredRequests,
  compareCodePoints,
  expandPolicy,
  renderSql,
  sweepChanges,
  sweepEscapeCheck,
  type PolicyContent,
  type SweepInput,
} from '@rolepolicy/policy';
import { cachedPolicy, type PostgresPolicy } from '@rolepolicy/plan-lifecycle';
import type { AuditSink } from '@rolepolicy/runtime';
import { connectionTarget } from '../execution/cluster-view.js';
import { roleLockFor } from '../execution/role-lock.js';
import { auditScoped } from './scoped-audit.js';
import type { ExecutionCluster } from '../execution/execution-cluster.js';
import type { ScopedFacts } from './scoped-result.js';
import { rolesScope } from './scoped-steps.js';

/** What a sweep needs of the executor. */
export interface SweepDeps {
  readonly cluster: ExecutionCluster;
  readonly identity: WorkloadIdentity | null;
  readonly tls: DatabaseTls;
  /**
   * The per-database mutex of this replica (a sweep waits its turn: it is a backstop, not a revocation) and a
   * slot of the server `server` points at, in the revocations' lane (behind waiting revocations).
   */
  readonly serialize: <T>(databaseKey: string, task: () => Promise<T>, server: ConnectionSpec) => Promise<T>;
  /** The maintenance database of the server's role lock (ADR 0027); null: none. */
  readonly roleLockDatabase: string | null;
  /** The replica's kept role-lock sessions (none: a session of its own per sweep). */
  readonly roleLockSessions?: RoleLockSessions | null;
  /** Where the revoked edges are recorded after the commit (docs/audit.md). */
  readonly audit: AuditSink;
}

type Plan =
  | { readonly ok: true; readonly input: Omit<SweepInput, 'live'>; readonly policy: PostgresPolicy }
  | { readonly ok: false; readonly facts: ScopedFacts };

const nothing = (reason: string, message: string): Plan => ({
  ok: false,
  facts: { outcome: 'Applied', reason, message: `${message}; nothing was run` },
});

/**
 * What the sweep of `message.policy` may touch, read from the cache now: the policy (same uid, `apply`
 * mode, expands), its roles, the bundle roles of the access policies naming it (only roles the policy
 * declares itself, never external ones: a sweep judges only edges between two roles the policy manages),
 * its declared edges and the requests holding access on it (anchored; Revoking included).
 */
function sweepPlan(message: ScopedExecuteRequestV1, cluster: ExecutionCluster): Plan {
  const ns = message.policy.namespace;
  const object = cluster.cache.get('postgrespolicy', ns, message.policy.name);
  const policy = object === undefined ? undefined : (cachedPolicy(object) ?? undefined);
  const name = `policy ${ns}/${message.policy.name}`;
  if (policy === undefined) return nothing('PolicyGone', `${name} no longer exists`);
  if (message.policy.uid === undefined || policy.metadata.uid !== message.policy.uid) {
    return nothing('PolicyRecreated', `${name} does not have uid ${message.policy.uid ?? 'none'}`);
  }
  if (policy.spec.mode !== 'apply') return nothing('NotApplyMode', `${name} is in ${policy.spec.mode} mode`);
  const expansion = expandPolicy(policy.spec as PolicyContent, { policyName: policy.metadata.name });
  if (!expansion.ok) {
    const errors = expansion.errors.slice(0, 3).map((e) => `${e.path}: ${e.message}`);
    return {
      ok: false,
      facts: {
        outcome: 'Blocked',
        reason: 'InvalidPolicy',
        message: `the target policy is invalid, so its declared memberships are unknown: ${errors.join('; ')}`,
      },
    };
  }
  const roles = expansion.desired.roles;
  const managed = new Set(roles.filter((r) => !r.external).map((r) => r.name));
  const named = cluster.cache
    .list('ephemeralaccesspolicy', ns)
    .filter((p) => p.spec?.postgresPolicyRef?.name === policy.metadata.name)
    .flatMap((p) => (p.spec?.memberships ?? []).map((m) => m.role ?? ''));
  const bundleRoles = [...new Set(named.filter((r) => managed.has(r)))].sort(compareCodePoints);
  if (bundleRoles.length === 0) return nothing('NoBundleRoles', `no access policy names a role of ${name}`);
  const holders = anchoredRequests({
    policyUid: message.policy.uid,
    requests: cluster.cache.withFields('ephemeralaccessrequest', ns, { targetPolicyUid: message.policy.uid }),
    planNamed: (planName) => cluster.cache.get('postgrespolicyplan', ns, planName),
  });
  return {
    ok: true,
    policy,
    input: {
      bundleRoles,
      members: roles.map((r) => r.name),
      durable: expansion.desired.memberships,
      holders,
    },
  };
}

/** Runs one Sweep to its outcome (throws only for transient trouble, which the transport redelivers). */
export async function runSweep(deps: SweepDeps, message: ScopedExecuteRequestV1): Promise<ScopedFacts> {
  const { cluster } = deps;
  await cluster.cache.sync();
  const first = sweepPlan(message, cluster);
  if (!first.ok) return first.facts;
  const ns = message.policy.namespace;
  const resolved = await cluster.view.secrets.connection({
    namespace: ns,
    policy: message.policy.name,
    target: connectionTarget(ns, first.policy.spec.connection as Connection) ?? '',
  });
  const connection = openConnection(
    { ...resolved.connection, maxConnections: 2, applicationName: 'rolepolicy-executor-scoped' },
    { identity: deps.identity, tls: deps.tls },
  );
  const roleLock = roleLockFor(
    resolved.connection,
    { identity: deps.identity, tls: deps.tls },
    deps.roleLockDatabase,
    deps.roleLockSessions,
  );
  try {
    // The connection is closed inside the server's slot, so the next holder finds the room this one leaves.
    const locked = () =>
      withRedaction(connection, () =>
        executeUnderLock<ScopedFacts>(
          connection.db,
          (session) => underLock(message, cluster, { ...connection, db: session }, deps.audit),
          roleLock.lock,
        ),
      ).finally(() => connection.close().catch(() => undefined));
    return await deps.serialize(`${ns}\u0000${resolved.target}`, locked, resolved.connection);
  } finally {
    await connection.close().catch(() => undefined);
    await roleLock.close();
  }
}

/**
 * While the lock is held (no Activate of this database can commit meanwhile): read everything again after a
 * sync, so an activation that committed before counts through its anchor, then the live edges, the changes
 * and the escape check.
 */
async function underLock(
  message: ScopedExecuteRequestV1,
  cluster: ExecutionCluster,
  connection: CatalogConnection,
  audit: AuditSink,
): Promise<LockedDecision<ScopedFacts>> {
  await cluster.cache.sync();
  const plan = sweepPlan(message, cluster);
  if (!plan.ok) return { run: false, result: plan.facts };
  const snapshot = await inspect(connection.db, rolesScope(plan.input.bundleRoles), connection.target);
  const input: SweepInput = { ...plan.input, live: snapshot.memberships };
  const computed = sweepChanges(input);
  const escape = sweepEscapeCheck(computed.changes, input);
  if (!escape.ok) {
    return {
      run: false,
      result: {
        outcome: 'Failed',
        reason: 'EscapeCheckFailed',
        message: `${escape.message}; nothing was run`,
      },
    };
  }
  if (computed.changes.length === 0) {
    return {
      run: false,
      result: {
        outcome: 'Applied',
        reason: 'NothingToSweep',
        message: `${computed.kept} live bundle edge(s), each declared or held by an active request`,
      },
    };
  }
  const rendered = renderSql(computed.changes, {
    serverVersionNum: snapshot.server_version_num,
    inventory: snapshot.inventory,
    passwords: {},
    executorRole: snapshot.executor.role,
  });
  return {
    run: true,
    statements: rendered.statements,
    afterCommit: async () => auditScoped(audit, message, computed.changes, connection.target),
    result: {
      outcome: 'Applied',
      reason: 'MembershipsSwept',
      message:
        `revoked ${computed.swept.length} membership(s) no active request holds and the policy does not ` +
        `declare: ${computed.swept.map((e) => `${e.role} -> ${e.member}`).join(', ')}; ` +
        `${computed.kept} live bundle edge(s) kept`,
      statements: rendered.statements.map((s) => s.redacted),
    },
  };
}
