// The approval race through the whole product: approvals, edits that change the effects and edits that
// keep them are interleaved at random for 200 iterations while the planner and executor run. From the
// executor's own result log and the test's log of approvals, no SQL ever runs unless its digest is the
// one a person approved for that plan and the one recomputed at execution time, and no plan runs twice.
import { connect, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import { SUBJECTS, type ExecuteResultV1 } from '@rolepolicy/contracts';
import { prng } from '../libs/catalog/src/test-support/random-policy.js';
import { condition, sleep, startStack, waitFor, type Stack, type TargetDatabase } from './stack.js';

const ITERATIONS = 200;
const SEED = Number(process.env['RACE_SEED'] ?? Date.now() % 1_000_000);

let stack: Stack;
console.log(`race seed ${SEED} (replay with RACE_SEED=${SEED})`);
let db: TargetDatabase;
let nats: NatsConnection;
let subscription: Subscription;
const results: ExecuteResultV1[] = [];

beforeAll(async () => {
  stack = await startStack();
  db = await stack.createDatabase('race');
  nats = await connect({ servers: stack.nats.url });
  // A plain subscription sees every result the executor publishes, next to the planner's durable consumer.
  subscription = nats.subscribe(SUBJECTS.executeResult, {
    callback: (err, msg) => {
      if (!err) results.push(msg.json<ExecuteResultV1>());
    },
  });
}, 45_000);

afterAll(async () => {
  subscription?.unsubscribe();
  await nats?.close();
  await stack?.stop();
});

test(`${ITERATIONS} random approvals and edits never execute a digest other than the approved one`, async () => {
  const next = prng(SEED); // mulberry32: a failing interleaving replays with RACE_SEED
  // One role whose declared shape moves between three variants: every switch is a real change (an ALTER
  // ROLE and a COMMENT) however often it was applied before, so plans keep coming for the whole run.
  const role = stack.role('racer');
  const variants = [0, 1, 2].map((k) => [
    { name: role, login: false, connection_limit: k, comment: `variant ${k}` },
  ]);
  const approvals = new Map<string, string>();
  let interval = 5;
  await stack.resources.createPolicy('race', {
    connection: db.connection,
    mode: 'apply',
    approval: 'manual',
    interval: `${interval}m`,
    roles: variants[0],
  });

  /** Approves a Pending plan: usually the newest, sometimes an older one a newer plan is replacing. */
  const approvePending = async (newest = true): Promise<void> => {
    const pending = (await stack.resources.plans('race')).filter((p) => p.status?.phase === 'Pending');
    const plan = newest ? pending.at(-1) : pending[Math.floor(next() * pending.length)];
    const digest = plan?.status?.changeDigest;
    if (!plan?.metadata.name || !digest) return;
    approvals.set(plan.metadata.name, digest);
    // A plan superseded meanwhile may refuse the decision at admission: that is a lost race, not a fault.
    await stack.resources.approve(plan.metadata.name).catch(() => approvals.delete(plan.metadata.name!));
  };

  // The run must race for real (plans executed all along, checked below): on a slow machine fewer plans
  // reach the executor within ITERATIONS moves, so the moves go on, up to three times as many.
  const appliedSoFar = (): number =>
    results.filter((r) => r.phase === 'Applied' && r.statementCount > 0).length;
  for (let i = 0; i < ITERATIONS || (appliedSoFar() < 3 && i < 3 * ITERATIONS); i++) {
    const roll = next();
    if (roll < 0.35) {
      await stack.resources.patchPolicySpec('race', {
        roles: variants[Math.floor(next() * variants.length)],
      });
    } else if (roll < 0.5) {
      interval = interval === 5 ? 6 : 5; // a new generation with identical effects
      await stack.resources.patchPolicySpec('race', { interval: `${interval}m` });
    } else if (roll < 0.8) {
      await approvePending();
    } else if (roll < 0.9) {
      await approvePending(false);
    } else {
      await sleep(50 + Math.floor(next() * 150));
    }
    // Give the planner and executor a moment between moves, so approvals meet plans in every state
    // (just computed, queued for execution, executing) rather than all landing before the first plan.
    await sleep(Math.floor(next() * 60));
  }

  // Let the last content converge: approve whatever is pending until the policy reports Reconciled.
  const final = await waitFor(
    'the last content to converge',
    async () => {
      const policy = await stack.resources.policy('race');
      const ready = condition(policy?.status?.conditions, 'Ready');
      if (
        ready?.reason === 'Reconciled' &&
        policy?.status?.observed_generation === policy?.metadata.generation
      ) {
        return policy;
      }
      await approvePending();
      return undefined;
    },
    { timeoutMs: 45_000, describe: () => stack.resources.policy('race').then((p) => p?.status) },
  );
  await sleep(500); // results published just before the last status write

  const context = `(seed ${SEED}; replay with RACE_SEED=${SEED})`;
  // Applying (about to run) and Applied (ran) results both name the digest they execute.
  const executed = results.filter((r) => r.executedDigest !== null && r.statementCount > 0);
  for (const result of executed) {
    const planName = result.plan.name;
    expect({ context, planName, executed: result.executedDigest }).toEqual({
      context,
      planName,
      executed: result.approvedDigest,
    });
    expect({ context, planName, recomputed: result.recomputedDigest }).toEqual({
      context,
      planName,
      recomputed: result.executedDigest,
    });
    expect({ context, planName, approvedByPerson: approvals.get(planName) }).toEqual({
      context,
      planName,
      approvedByPerson: result.executedDigest,
    });
  }
  const appliedPlans = results
    .filter((r) => r.phase === 'Applied' && r.statementCount > 0)
    .map((r) => r.plan.name);
  expect({ context, twice: appliedPlans.filter((name, i) => appliedPlans.indexOf(name) !== i) }).toEqual({
    context,
    twice: [],
  });
  // The run raced for real: plans were executed all along, not only the final one.
  expect({ context, enoughExecutions: appliedPlans.length >= 3 }).toEqual({
    context,
    enoughExecutions: true,
  });

  // The last content converged: the role has the last variant's shape.
  const last = (final.spec.roles as readonly { connection_limit: number }[])[0]?.connection_limit;
  const [shape] = await db.sql<{ rolconnlimit: number }>(
    'SELECT rolconnlimit FROM pg_roles WHERE rolname = $1',
    [role],
  );
  expect({ context, connectionLimit: shape?.rolconnlimit }).toEqual({ context, connectionLimit: last });
  console.log(
    `race ${context}: ${appliedPlans.length} plans executed, ${results.length} results ` +
      `(${results.filter((r) => r.phase === 'Superseded').length} superseded, ` +
      `${results.filter((r) => r.phase === 'Skipped').length} skipped), ${approvals.size} approvals`,
  );
}, 150_000);
