// End to end, the audit trail over OTLP (issue 30, docs/audit.md "Where records go"): the executor runs as
// its own process, as in a cluster, with OTEL_LOGS_EXPORTER=otlp and its traces sent to an in-process
// OTLP/HTTP receiver through the real OpenTelemetry SDK. A policy with a password is applied; its
// `plan.applied` record arrives as an OTLP log record with the documented body, eventName, severity,
// timestamp and attributes under the executor's resource, equal to the line the executor printed, and no
// secret the policy used is in anything the receiver got.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ChildProcess } from 'node:child_process';
import { auditRecordsIn, type AuditRecord } from '@rolepolicy/contracts';
import { freePort, inspectSealEnv, OtlpReceiver, spawnTs, type ReceivedLog } from '@rolepolicy/testing';
import { startStack, waitFor, type Stack, type TargetDatabase } from './stack.js';

const EXECUTOR_MAIN = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../apps/executor/src/main.ts',
);
const PASSWORD = 'otlp-Audit-Password-5c8e2';
const POD = 'rolepolicy-executor-5d7c9-otlp0';

let receiver: OtlpReceiver;
let stack: Stack;
let db: TargetDatabase;
let child: ChildProcess | undefined;
/** What the child executor printed on stdout. */
const printed: string[] = [];

beforeAll(async () => {
  receiver = await OtlpReceiver.start();
  stack = await startStack();
  db = await stack.createDatabase('otlp');
  // The in-process executor makes way for one with its own process, SDK and resource.
  await stack.stopServices(['executor']);
  const port = await freePort();
  child = spawnTs(EXECUTOR_MAIN, {
    env: {
      NATS_URL: stack.nats.url,
      KUBECONFIG: stack.emulator.kubeconfigPath,
      HTTP_HOST: '127.0.0.1',
      HTTP_PORT: String(port),
      LOG_LEVEL: 'error',
      HOSTNAME: POD,
      ...inspectSealEnv(),
      // Traces and log records to the receiver as OTLP/HTTP JSON, exported within 100 ms.
      ...receiver.env({ logs: true }),
      OTEL_BSP_SCHEDULE_DELAY: '100',
      OTEL_BLRP_SCHEDULE_DELAY: '100',
    },
    onLine: (line) => printed.push(line),
  });
  await waitFor(
    'the executor process ready',
    async () => (await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined))?.status === 200,
    { timeoutMs: 60_000 },
  );
}, 120_000);

afterAll(async () => {
  if (child && child.exitCode === null) {
    child.kill('SIGTERM');
    await new Promise((resolve) => child!.once('exit', resolve));
  }
  await stack?.stop();
  await receiver?.stop();
}, 120_000);

type PlanApplied = Extract<AuditRecord, { event: 'plan.applied' }>;
const auditLogs = (): ReceivedLog[] => receiver.logs.filter((l) => l.scope === 'rolepolicy.audit');

test('the executor’s plan.applied record arrives over OTLP as documented, under its resource, with no secret', async () => {
  const [app, reader] = [stack.role('otlp_app'), stack.role('otlp_reader')];
  await stack.core.createNamespacedSecret({
    namespace: stack.namespace,
    body: { metadata: { name: 'otlp-password' }, type: 'Opaque', stringData: { [app]: PASSWORD } },
  });
  await stack.resources.createPolicy('otlp', {
    connection: db.connection,
    mode: 'apply',
    approval: 'auto',
    roles: [
      { name: reader, login: false },
      { name: app, login: true, password: { secretRef: { name: 'otlp-password' } } },
    ],
    memberships: [{ role: reader, members: [{ name: app }] }],
  });
  await stack.reconciled('otlp', 60_000);

  // The line the executor printed (its stdout: the log stream of docs/logging.md).
  const applied = await waitFor('the plan.applied line of the executor', async () =>
    auditRecordsIn(printed).find(
      (r): r is PlanApplied => r.event === 'plan.applied' && r.policy.name === 'otlp',
    ),
  );
  const exported = await waitFor(
    'its OTLP log record',
    async () => auditLogs().find((l) => l.attributes['rolepolicy.audit.id'] === applied.id),
    { timeoutMs: 20_000, describe: async () => receiver.logs.map((l) => l.eventName) },
  );

  expect(applied).toMatchObject({
    source: 'executor',
    executor: POD,
    changes: {
      passwordsSet: [app],
      membershipsGranted: [{ role: reader, member: app }],
    },
    database: { name: db.database },
  });
  // The body is the record, exactly; the rest is what docs/audit.md lists.
  expect(exported.body).toEqual(applied);
  expect(exported).toMatchObject({
    scope: 'rolepolicy.audit',
    eventName: 'rolepolicy.audit.plan.applied',
    severityNumber: 9,
    severityText: 'INFO',
    timeNs: BigInt(Date.parse(applied.at)) * 1_000_000n,
  });
  expect(exported.attributes).toEqual({
    'rolepolicy.audit.id': applied.id,
    'rolepolicy.audit.event': 'plan.applied',
    'rolepolicy.audit.schema_version': 1,
    'rolepolicy.audit.source': 'executor',
    'k8s.namespace.name': stack.namespace,
    'rolepolicy.object.kind': 'PostgresPolicyPlan',
    'rolepolicy.object.name': applied.object.name,
    // Left out while the object's uid is not known (the executor has the plan's name, not its uid).
    ...(applied.object.uid === null ? {} : { 'rolepolicy.object.uid': applied.object.uid }),
  });
  // The executor's resource: its service name, in the rolepolicy namespace of services.
  expect(exported.serviceName).toBe('rolepolicy-executor');
  expect(exported.resource).toMatchObject({
    'service.name': 'rolepolicy-executor',
    'service.namespace': 'rolepolicy',
  });
  // Its traces went to the same receiver, under the same resource.
  await waitFor('the executor’s commit span', async () =>
    receiver.spans.some((s) => s.serviceName === 'rolepolicy-executor' && s.name === 'executor commit'),
  );

  // Only the executor exports (the other services run without an SDK); each record once.
  const ids = auditLogs().map((l) => l.attributes['rolepolicy.audit.id']);
  expect(new Set(auditLogs().map((l) => l.serviceName))).toEqual(new Set(['rolepolicy-executor']));
  expect(ids).toHaveLength(new Set(ids).size);

  // Nothing the receiver got holds the password, the connection URL or a verifier.
  const everything = JSON.stringify({ logs: receiver.logs, spans: receiver.spans }, (_, v: unknown) =>
    typeof v === 'bigint' ? v.toString() : v,
  );
  for (const secret of [PASSWORD, db.url, 'SCRAM-SHA-256$']) expect(everything).not.toContain(secret);
}, 120_000);
