// The demo's reconcile loop on the embedded cluster: a demo database, an apply/auto policy (profiles x schemas,
// a login role with a generated password) watched as its plan and conditions change, a manual-approval policy
// the demo approves, a candidate proposal planned, approved, merged and promoted, the state read back from
// PostgreSQL, then a time-boxed grant that ends revoked (tools/demo-ephemeral.ts). Every wait is bounded.
import pg from 'pg';
import type { KubeConfig } from '@kubernetes/client-node';
import { CoreV1Api } from '@kubernetes/client-node';
import {
  createPostgresSandbox,
  postgresAdminUrl,
  sandboxId,
  type PostgresSandbox,
} from '@rolepolicy/testing';
import { condition, PolicyResources } from '../e2e/support/resources.js';
import { candidateStep } from './demo-candidate.js';
import { ephemeralStep } from './demo-ephemeral.js';

const NAMESPACE = 'demo';

/** Raised when a step does not complete in time; the message says what was pending. */
export class DemoStepTimeout extends Error {
  override readonly name = 'DemoStepTimeout';
}

type Snapshot = { readonly line: string; readonly done: boolean };

/** Polls `probe`, printing each new line it returns, until it reports done or `timeoutMs` passes. */
async function follow(what: string, probe: () => Promise<Snapshot>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    const { line, done } = await probe();
    if (line !== last) console.log(`  ${line}`);
    last = line;
    if (done) return;
    if (Date.now() > deadline) {
      throw new DemoStepTimeout(`${what}: not done after ${timeoutMs / 1000} s; last state: ${line}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}

function describePolicy(resources: PolicyResources, name: string) {
  return async (): Promise<{ line: string; ready?: string; plan?: string; phase?: string }> => {
    const policy = await resources.policy(name);
    const ready = condition(policy?.status?.conditions, 'Ready');
    const plan = policy?.status?.current_plan_ref?.name ?? undefined;
    const phase = plan ? (await resources.plan(plan))?.status?.phase : undefined;
    const parts = [
      `${name}: Ready=${ready?.status ?? '-'}/${ready?.reason ?? '-'}`,
      plan ? `plan ${plan} ${phase ?? ''}` : 'no current plan',
    ];
    return { line: parts.join(', '), ready: ready?.reason ?? undefined, plan, phase: phase ?? undefined };
  };
}

/** What the loop leaves behind: call after the services stopped (they hold connections to the database). */
export type DemoCleanup = () => Promise<void>;

/**
 * Runs the loop against the cluster `kc` points at; the services must be running. `register` receives the
 * cleanup (drop the demo database and roles) before anything is created, so a failed step is cleaned too.
 */
export async function runDemoLoop(
  kc: KubeConfig,
  register: (cleanup: DemoCleanup) => void,
  loop: {
    /** Bound of each step (convergence, a plan appearing, an approval applying, an activation). */
    readonly stepTimeoutMs: number;
    /** Duration of the ephemeral grant; its expiry wait is this plus the step bound. */
    readonly ephemeralSeconds: number;
    /** The access-scheduler's queue dashboard, printed while the ephemeral grant waits for its expiry. */
    readonly dashboard?: { readonly url: string; readonly access: string };
  },
): Promise<void> {
  const { stepTimeoutMs, ephemeralSeconds, dashboard } = loop;
  const prefix = `demo_${sandboxId()}_`;
  const resources = new PolicyResources(kc, NAMESPACE);
  let db: PostgresSandbox | undefined;
  let admin: pg.Client | undefined;
  register(async () => {
    await admin?.end().catch(() => undefined);
    await db?.drop().catch(() => undefined);
    await dropRoles(prefix);
  });
  {
    db = await createPostgresSandbox('demo');
    admin = new pg.Client({ connectionString: db.url });
    admin.on('error', () => undefined);
    await admin.connect();
    await admin.query(
      'CREATE SCHEMA orders; CREATE TABLE orders.items (id int); CREATE SCHEMA billing; CREATE TABLE billing.invoices (id int)',
    );
    await kc.makeApiClient(CoreV1Api).createNamespacedSecret({
      namespace: NAMESPACE,
      body: { metadata: { name: 'demo-db' }, stringData: { DATABASE_URL: db.url } },
    });
    console.log(`\ndemo database ${db.database}; connection Secret ${NAMESPACE}/demo-db`);

    const app = `${prefix}app`;
    console.log(
      `\n1. PostgresPolicy "shop" (apply, approval auto): viewer/editor x orders/billing, login ${app}`,
    );
    await resources.createPolicy('shop', {
      connection: { secretRef: { name: 'demo-db' } },
      mode: 'apply',
      approval: 'auto',
      role_pattern: `${prefix}{schema}_{profile}`,
      profiles: {
        viewer: {
          grants: [
            { object: { type: 'schema' }, privileges: ['USAGE'] },
            { object: { type: 'table', name: '*' }, privileges: ['SELECT'] },
          ],
        },
        editor: {
          grants: [
            { object: { type: 'schema' }, privileges: ['USAGE'] },
            { object: { type: 'table', name: '*' }, privileges: ['SELECT', 'INSERT', 'UPDATE', 'DELETE'] },
          ],
        },
      },
      schemas: [
        { name: 'orders', profiles: ['viewer', 'editor'] },
        { name: 'billing', profiles: ['viewer'] },
      ],
      roles: [{ name: app, login: true, password: { generate: { length: 24 } } }],
      grants: [{ role: app, object: { type: 'database', name: db.database }, privileges: ['CONNECT'] }],
      memberships: [{ role: `${prefix}orders_editor`, members: [{ name: app }] }],
    });
    const shop = describePolicy(resources, 'shop');
    await follow(
      'policy shop to converge',
      async () => {
        const s = await shop();
        return { line: s.line, done: s.ready === 'Reconciled' };
      },
      stepTimeoutMs,
    );
    const applied = (await resources.plans('shop')).find((p) => p.status?.phase === 'Applied');
    if (applied) {
      console.log(`  plan ${applied.metadata.name} (SQL preview, passwords redacted):`);
      for (const line of String(applied.status?.sqlInline ?? '').split('\n')) console.log(`    ${line}`);
    }

    const auditor = `${prefix}auditor`;
    console.log(`\n2. PostgresPolicy "audit" (apply, approval manual): role ${auditor} waits for a person`);
    await resources.createPolicy('audit', {
      connection: { secretRef: { name: 'demo-db' } },
      mode: 'apply',
      approval: 'manual',
      roles: [{ name: auditor, login: false }],
      grants: [{ role: auditor, object: { type: 'database', name: db.database }, privileges: ['CONNECT'] }],
    });
    const audit = describePolicy(resources, 'audit');
    let pending = '';
    await follow(
      'a Pending plan for policy audit',
      async () => {
        const s = await audit();
        if (s.phase === 'Pending' && s.plan) pending = s.plan;
        return { line: s.line, done: pending !== '' };
      },
      stepTimeoutMs,
    );
    console.log(`  approving ${pending} as demo@rolepolicy.io (status condition Approved=True + decidedBy)`);
    await resources.approve(pending, { username: 'demo@rolepolicy.io' });
    await follow(
      'the approved plan of policy audit to apply',
      async () => {
        const s = await audit();
        return { line: s.line, done: s.ready === 'Reconciled' };
      },
      stepTimeoutMs,
    );

    await candidateStep(kc, NAMESPACE, resources, follow, {
      auditor,
      reader: `${prefix}audit_reader`,
      database: db.database,
      timeoutMs: stepTimeoutMs,
    });

    console.log('\n4. roles, memberships and privileges read back from PostgreSQL:');
    const { rows } = await admin.query<{
      role: string;
      login: boolean;
      member_of: string;
      privileges: string;
    }>(
      `SELECT r.rolname AS role, r.rolcanlogin AS login,
              coalesce((SELECT string_agg(g.rolname, ', ') FROM pg_auth_members m JOIN pg_roles g ON g.oid = m.roleid
                         WHERE m.member = r.oid), '') AS member_of,
              coalesce((SELECT string_agg(DISTINCT p.table_schema || '.' || p.table_name || ' ' || p.privilege_type, ', ')
                         FROM information_schema.role_table_grants p WHERE p.grantee = r.rolname), '') AS privileges
         FROM pg_roles r WHERE starts_with(r.rolname, $1) ORDER BY 1`,
      [prefix],
    );
    for (const row of rows) {
      console.log(
        `  ${row.role.padEnd(34)} login=${row.login ? 'yes' : 'no '} member of [${row.member_of}] ${row.privileges}`,
      );
    }
    await ephemeralStep(kc, NAMESPACE, admin, follow, {
      member: app,
      role: `${prefix}billing_viewer`,
      seconds: ephemeralSeconds,
      timeoutMs: stepTimeoutMs,
      ...(dashboard ? { dashboard } : {}),
    });
    console.log('\ndemo loop complete');
  }
}

async function dropRoles(prefix: string): Promise<void> {
  let client: pg.Client | undefined;
  try {
    // The same server the demo database lives on (the embedded fallback when the configured one is absent).
    client = new pg.Client({ connectionString: await postgresAdminUrl() });
    await client.connect();
    const { rows } = await client.query<{ rolname: string }>(
      'SELECT rolname FROM pg_roles WHERE starts_with(rolname, $1)',
      [prefix],
    );
    for (const { rolname } of rows)
      await client.query(`DROP ROLE IF EXISTS "${rolname}"`).catch(() => undefined);
  } catch {
    // Best effort: a demo that could not reach PostgreSQL has nothing to clean.
  } finally {
    await client?.end().catch(() => undefined);
  }
}
