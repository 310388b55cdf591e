// Round trip of `rolepolicy generate`: on every seed of the random-database corpus (the convergence
// generator: a random policy applied, then random raw-SQL drift, so the database is "an existing one"),
// generate a policy, print it as YAML, read it back and plan it in authoritative mode: zero changes,
// with and without --suggest-profiles; after the drift, and before it where a profile spans both schemas. One database and one server per PG_MAJORS entry.
// Seeds: ROUNDTRIP_SEED (random by default) for ROUNDTRIP_RUNS seeds (200 by default).

import {
  computePlan,
  CONTENT_FIELDS,
  deriveManagedScope,
  expandPolicy,
  generatePolicy,
  renderManifest,
  renderSql,
  suggestProfiles,
  type GeneratedPolicy,
  type PolicyContent,
} from '@rolepolicy/policy';
import {
  createPostgresSandbox,
  postgresTargetLabel,
  postgresTargets,
  sandboxId,
  type PostgresSandbox,
} from '@rolepolicy/testing';
import pg from 'pg';
import { parse } from 'yaml';

import { openConnection, type CatalogConnection } from './connection.js';
import { executeStatements } from './execute.js';
import { readForGenerate } from './generate-read.js';
import { inspect } from './inspect.js';
import { buildWorld, driftSql, teardownSql, type World } from './test-support/random-policy.js';

const RUNS = Number(process.env['ROUNDTRIP_RUNS'] ?? 200);
const BASE_SEED = Number(process.env['ROUNDTRIP_SEED'] ?? Math.floor(Math.random() * 1_000_000));
const RUN_TAG = sandboxId().slice(0, 4);

describe.each(postgresTargets().map((target) => ({ target, label: postgresTargetLabel(target) })))(
  'generate round trip on $label',
  ({ target }) => {
    let sandbox: PostgresSandbox;
    let admin: pg.Client;
    let superuser: CatalogConnection;

    beforeAll(async () => {
      sandbox = await createPostgresSandbox('generate', target);
      admin = new pg.Client({ connectionString: sandbox.url });
      await admin.connect();
      superuser = openConnection({ url: sandbox.url });
    });

    afterAll(async () => {
      await superuser.close();
      await admin.end();
      await sandbox.drop();
    });

    /** Plans content in authoritative mode; returns the redacted SQL of any change. */
    async function planChanges(connection: CatalogConnection, content: PolicyContent): Promise<string> {
      const expansion = expandPolicy(content, { policyName: 'generated' });
      if (!expansion.ok) throw new Error(`generated policy is invalid: ${JSON.stringify(expansion.errors)}`);
      const snapshot = await inspect(connection.db, deriveManagedScope(expansion.desired), connection.target);
      const result = computePlan({
        desired: expansion.desired,
        snapshot,
        mode: 'authoritative',
        passwordSources: {},
        appliedPasswordSourceVersions: {},
        allowSchemaOwnerTransfers: false,
      });
      if (result.blockers.length > 0) return `blocked: ${result.blockers.join('; ')}`;
      if (result.changes.length === 0) return '';
      return renderSql(result.changes, {
        serverVersionNum: snapshot.server_version_num,
        inventory: snapshot.inventory,
        passwords: {},
      }).redactedSql;
    }

    /** The content of the printed manifest, read back as `plan -f` reads it. */
    function readBack(generated: GeneratedPolicy): PolicyContent {
      const text = renderManifest(generated.content, generated.notes, {
        name: 'generated',
        namespace: 'ns',
        connectionSecret: 'db',
        database: sandbox.database,
      });
      const manifest = parse(text) as { spec: Record<string, unknown> };
      return Object.fromEntries(
        CONTENT_FIELDS.filter((field) => field in manifest.spec).map((field) => [
          field,
          manifest.spec[field],
        ]),
      ) as PolicyContent;
    }

    /** Applies the world's policy as its executor. */
    async function applyWorld(world: World, connection: CatalogConnection): Promise<void> {
      await admin.query(world.setupSql);
      const expansion = expandPolicy(world.content, { policyName: 'world' });
      if (!expansion.ok) throw new Error(`world policy is invalid: ${JSON.stringify(expansion.errors)}`);
      const snapshot = await inspect(connection.db, deriveManagedScope(expansion.desired), connection.target);
      const plan = computePlan({
        desired: expansion.desired,
        snapshot,
        mode: 'authoritative',
        passwordSources: {},
        appliedPasswordSourceVersions: {},
        allowSchemaOwnerTransfers: false,
      });
      const rendered = renderSql(plan.changes, {
        serverVersionNum: snapshot.server_version_num,
        inventory: snapshot.inventory,
        passwords: {},
        executorRole: snapshot.executor.role,
      });
      await executeStatements(connection.db, rendered.statements);
    }

    /** generate, then plan, with and without the profile suggestion; returns whether profiles folded. */
    async function roundTrip(world: World, stage: string, connection: CatalogConnection): Promise<boolean> {
      const source = await readForGenerate(
        connection.db,
        { roles: [`${world.prefix}*`], exclude: [] },
        connection.target,
      );
      const generated = generatePolicy(source, { mode: 'authoritative' });
      const flat = await planChanges(connection, readBack(generated));
      if (flat !== '') throw new Error(`${stage}: generate then plan is not empty:\n${flat}`);
      const suggestion = suggestProfiles(generated);
      const profiled = await planChanges(connection, readBack(suggestion.policy));
      if (profiled !== '')
        throw new Error(
          `${stage}: generate --suggest-profiles then plan is not empty:\n${profiled}\n${suggestion.report.join('\n')}`,
        );
      return suggestion.folded;
    }

    async function cleanup(world: World): Promise<void> {
      await admin.query('RESET ROLE');
      for (const statement of teardownSql(world)) await admin.query(statement);
      const { rows } = await admin.query<{ rolname: string }>(
        'SELECT rolname FROM pg_roles WHERE starts_with(rolname, $1)',
        [world.prefix],
      );
      for (const row of rows) await admin.query(`DROP OWNED BY "${row.rolname}" CASCADE`);
      for (const row of rows) await admin.query(`DROP ROLE IF EXISTS "${row.rolname}"`);
    }

    /** Returns whether --suggest-profiles folded anything for this seed. */
    async function runSeed(seed: number): Promise<boolean> {
      const world = buildWorld(seed, sandbox.database, RUN_TAG, sandbox.serverVersionNum);
      await cleanup(world);
      let folded = false;
      let failure: unknown = null;
      // Read, plan and apply as the world's executor: a CREATEROLE non-superuser in about a third of the
      // seeds (it cannot read pg_authid, and on 16+ holds implicit ADMIN memberships the engine ignores).
      const connection =
        world.executor === null
          ? superuser
          : openConnection({ url: sandbox.url, setRole: world.executor, maxConnections: 2 });
      try {
        // After raw-SQL drift (an "existing" database); and, where a profile is bound to both schemas, also
        // as the policy left it, when its profile roles are intact and --suggest-profiles can fold them.
        await applyWorld(world, connection);
        if (world.generated.length > 1) folded = await roundTrip(world, 'applied', connection);
        for (const statement of driftSql(world, seed)) await admin.query(statement);
        if (await roundTrip(world, 'drifted', connection)) folded = true;
      } catch (error) {
        failure = error;
      }
      if (connection !== superuser) await connection.close();
      await cleanup(world).catch((error: unknown) => {
        failure ??= new Error(`cleanup failed: ${String(error)}`);
      });
      if (failure !== null) throw failure;
      return folded;
    }

    it(`${RUNS} random databases: generate, then plan in authoritative mode, gives no changes`, async () => {
      const failures: string[] = [];
      let folded = 0;
      for (let i = 0; i < RUNS && failures.length === 0; i++) {
        const seed = BASE_SEED + i;
        try {
          if (await runSeed(seed)) folded += 1;
        } catch (error) {
          failures.push(
            `seed ${seed} failed (reproduce: ROUNDTRIP_SEED=${seed} ROUNDTRIP_RUNS=1):\n${error instanceof Error ? error.message : String(error)}`,
          );
        }
      }
      expect(failures).toEqual([]);
      // The corpus binds one profile to both schemas in about a quarter of the seeds: some must fold.
      if (RUNS >= 50) expect(folded).toBeGreaterThan(0);
    }, 600_000);
  },
);
