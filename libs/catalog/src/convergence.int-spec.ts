// Live convergence property test: for many seeded random policies on the real PostgreSQL, bootstrap,
// inject random raw-SQL drift, plan, apply, re-inspect: the live state equals desired and a second plan is empty.
// Seeds run from CONVERGENCE_SEED (random by default) for CONVERGENCE_RUNS seeds (200 by default): reproduce
// one failure with CONVERGENCE_SEED=<seed> CONVERGENCE_RUNS=1, survey a range with
// CONVERGENCE_SEED=<first> CONVERGENCE_RUNS=<n> CONVERGENCE_MAX_FAILURES=<k> (docs/catalog.md).
// Other runs may share the server at the same time: every comparison is limited to this run's roles.

import {
  applyChanges,
  computePlan,
  deriveManagedScope,
  expandPolicy,
  renderSql,
  type CatalogSnapshot,
  type DesiredState,
  type ManagedScope,
} from '@rolepolicy/policy';
import {
  createPostgresSandbox,
  postgresTargetLabel,
  postgresTargets,
  sandboxId,
  type PostgresSandbox,
} from '@rolepolicy/testing';
import pg from 'pg';

import { openConnection, type CatalogConnection } from './connection.js';
import { executeStatements } from './execute.js';
import { inspect } from './inspect.js';
import { liveMismatches } from './test-support/live-oracle.js';
import { buildWorld, driftSql, teardownSql, type World } from './test-support/random-policy.js';

const RUNS = Number(process.env['CONVERGENCE_RUNS'] ?? 200);
/** Stop after this many failing seeds (set higher to survey failures while debugging). */
const MAX_FAILURES = Number(process.env['CONVERGENCE_MAX_FAILURES'] ?? 1);
const BASE_SEED = Number(process.env['CONVERGENCE_SEED'] ?? Math.floor(Math.random() * 1_000_000));
/** Part of every role name of this run, so that runs of the same seed never share a role. */
const RUN_TAG = sandboxId().slice(0, 4);

describe.each(postgresTargets().map((target) => ({ target, label: postgresTargetLabel(target) })))(
  'on $label',
  ({ target }) => {
    let sandbox: PostgresSandbox;
    let admin: pg.Client;
    let superuser: CatalogConnection;

    beforeAll(async () => {
      sandbox = await createPostgresSandbox('convergence', target);
      admin = new pg.Client({ connectionString: sandbox.url });
      await admin.connect();
      superuser = openConnection({ url: sandbox.url });
    });

    afterAll(async () => {
      await superuser.close();
      await admin.end();
      await sandbox.drop();
    });

    async function plan(connection: CatalogConnection, desired: DesiredState, scope: ManagedScope) {
      const snapshot = await inspect(connection.db, scope, connection.target);
      const result = computePlan({
        desired,
        snapshot,
        mode: 'authoritative',
        passwordSources: {},
        appliedPasswordSourceVersions: {},
        allowSchemaOwnerTransfers: false,
      });
      return { snapshot, result };
    }

    /** Plans and applies once; returns the snapshot after applying and the number of changes applied. */
    async function converge(
      connection: CatalogConnection,
      desired: DesiredState,
      scope: ManagedScope,
    ): Promise<CatalogSnapshot> {
      const { snapshot, result } = await plan(connection, desired, scope);
      if (result.blockers.length > 0) throw new Error(`blocked: ${result.blockers.join('; ')}`);
      const rendered = renderSql(result.changes, {
        serverVersionNum: snapshot.server_version_num,
        inventory: snapshot.inventory,
        passwords: {},
        executorRole: snapshot.executor.role,
      });
      await executeStatements(connection.db, rendered.statements);
      const after = await plan(connection, desired, scope);
      // Differential: the interpreter's prediction of the plan's effect must match what the server did.
      const predicted = applyChanges(snapshot, result.changes);
      const mismatch = interpreterMismatch(predicted, after.snapshot, scope);
      if (mismatch !== null)
        throw new Error(`the interpreter's prediction differs from the live database: ${mismatch}`);
      if (after.result.changes.length > 0) {
        throw new Error(
          `a second plan is not empty after applying:\n${
            renderSql(after.result.changes, {
              serverVersionNum: after.snapshot.server_version_num,
              inventory: after.snapshot.inventory,
              passwords: {},
            }).redactedSql
          }\nfirst plan was:\n${rendered.redactedSql}`,
        );
      }
      return after.snapshot;
    }

    /**
     * Compares the interpreter's predicted roles, memberships, schemas and default privileges with live ones.
     * The interpreter also models PostgreSQL's built-in PUBLIC defaults of every role it creates; inspection
     * reads PUBLIC defaults only for declared patterns, so only those are compared. Inspection reads every
     * member of a granted `pg_*` role, cluster-wide: only edges whose member is one of this policy's roles are
     * compared, since another run on the same server may grant pg_read_all_stats to its own roles meanwhile.
     */
    function interpreterMismatch(
      predicted: CatalogSnapshot,
      live: CatalogSnapshot,
      scope: ManagedScope,
    ): string | null {
      const declaredPublic = (entry: CatalogSnapshot['default_privileges'][number]): boolean =>
        entry.grantee !== 'PUBLIC' ||
        scope.default_privilege_scopes.some(
          (key) =>
            key.owner === entry.owner &&
            key.on_type === entry.on_type &&
            JSON.stringify(key.scope) === JSON.stringify(entry.scope) &&
            key.public_privileges.length > 0,
        );
      const view = (snapshot: CatalogSnapshot) => ({
        roles: snapshot.roles,
        memberships: snapshot.memberships
          .filter(({ member }) => scope.roles.includes(member))
          .map(({ role, member, inherit, admin }) => ({ role, member, inherit, admin })),
        schemas: snapshot.schemas,
        default_privileges: snapshot.default_privileges.filter(declaredPublic),
      });
      const [a, b] = [view(predicted), view(live)];
      for (const key of Object.keys(a) as (keyof typeof a)[]) {
        const left = JSON.stringify(a[key].map((entry) => JSON.stringify(entry)).sort());
        const right = JSON.stringify(b[key].map((entry) => JSON.stringify(entry)).sort());
        if (left !== right) return `${key}: predicted ${left} but live ${right}`;
      }
      return null;
    }

    async function cleanup(world: World): Promise<void> {
      // A drift statement that failed after SET ROLE must not leave the next seeds running as the owner.
      await admin.query('RESET ROLE');
      for (const statement of teardownSql(world)) await admin.query(statement);
      const { rows } = await admin.query<{ rolname: string }>(
        'SELECT rolname FROM pg_roles WHERE starts_with(rolname, $1)',
        [world.prefix],
      );
      for (const row of rows) await admin.query(`DROP OWNED BY "${row.rolname}" CASCADE`);
      for (const row of rows) await admin.query(`DROP ROLE IF EXISTS "${row.rolname}"`);
    }

    async function runSeed(seed: number): Promise<void> {
      const world = buildWorld(seed, sandbox.database, RUN_TAG, sandbox.serverVersionNum);
      await cleanup(world);
      await admin.query(world.setupSql);
      const expansion = expandPolicy(world.content, { policyName: 'convergence' });
      if (!expansion.ok) throw new Error(`generated policy is invalid: ${JSON.stringify(expansion.errors)}`);
      const desired = expansion.desired;
      const scope = deriveManagedScope(desired);
      const connection =
        world.executor === null
          ? superuser
          : openConnection({ url: sandbox.url, setRole: world.executor, maxConnections: 2 });
      let failure: unknown = null;
      try {
        await converge(connection, desired, scope);
        for (const statement of driftSql(world, seed)) {
          await admin.query(statement).catch((error: unknown) => {
            throw new Error(`drift statement failed: ${statement}: ${String(error)}`);
          });
        }
        const live = await converge(connection, desired, scope);
        if (world.executor !== null)
          expect(live.executor).toMatchObject({ role: world.executor, superuser: false, createrole: true });
        const problems = liveMismatches(desired, live);
        if (problems.length > 0) throw new Error(`live state differs from desired:\n${problems.join('\n')}`);
      } catch (error) {
        failure = error;
      }
      if (connection !== superuser) await connection.close();
      // Roles are cluster-global: a failing seed must not leave them behind for other suites. A cleanup
      // error must not hide the seed's own failure.
      await cleanup(world).catch((error: unknown) => {
        failure ??= new Error(`cleanup failed: ${String(error)}`);
      });
      if (failure !== null) throw failure;
    }

    describe('live convergence property', () => {
      it(`${RUNS} random policies with drift converge in one apply and a second plan is empty`, async () => {
        const failures: string[] = [];
        for (let i = 0; i < RUNS && failures.length < MAX_FAILURES; i++) {
          const seed = BASE_SEED + i;
          try {
            await runSeed(seed);
          } catch (error) {
            const message = error instanceof Error ? error.message : String(error);
            failures.push(
              `seed ${seed} failed (reproduce: CONVERGENCE_SEED=${seed} CONVERGENCE_RUNS=1):\n` +
                `${JSON.stringify(buildWorld(seed, sandbox.database, RUN_TAG, sandbox.serverVersionNum).content)}\n${message}`,
            );
          }
        }
        if (failures.length > 0) throw new Error(failures.join('\n\n'));
      }, 290_000);
    });
  },
);
