// End to end, what rests in NATS and Redis after a whole flow carries no secret value: a connection
// Secret whose URL holds a password (applied the way kubectl apply does, with its last-applied copy), a
// literal connection password, a Secret-sourced password rotated once, and a generated password. Every
// message of every JetStream stream (KV buckets and object stores included) and every Redis key is read
// back, and so is every line the services log at the most verbose level, every Kubernetes Event
// they recorded, and every message that crossed core NATS during the flow (a subscriber on `>`: inspect
// requests and replies, Secret reads, post-apply snapshots): no password, verifier or URL, nor the base64
// of one, anywhere.
import { generatedSecretName } from '@rolepolicy/kube';
import { localRedisUrl } from '@rolepolicy/testing';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { findNeedles, redisContents, streamContents, wireTap, type StoredItem } from './support/at-rest.js';
import { startStack, waitFor, type Stack, type TargetDatabase } from './stack.js';

let stack: Stack;
let db: TargetDatabase;
/** A subscriber on `>` for the whole flow, as a holder of wide subscribe rights (or a capture) would be. */
let tap: NatsConnection;
let wire: StoredItem[];

/** Every line the services log during the flow, at the most verbose level (JSON, one object a line). */
const logged: string[] = [];
const originalWrite = process.stdout.write;

beforeAll(async () => {
  process.stdout.write = ((chunk: string | Uint8Array) => {
    logged.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
    return true;
  }) as typeof process.stdout.write;
  // The audit records on stdout too (AUDIT_LOG_FILE empty): every line a service writes is checked.
  stack = await startStack({ env: { LOG_LEVEL: 'verbose', LOG_FORMAT: 'json', AUDIT_LOG_FILE: '' } });
  tap = await connect({ servers: stack.nats.url });
  wire = wireTap(tap);
  db = await stack.createDatabase('at_rest');
}, 45_000);

afterAll(async () => {
  await tap?.drain();
  await stack?.stop();
  process.stdout.write = originalWrite;
});

const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

test('no password, verifier or connection URL rests in any stream, bucket, object store or Redis key', async () => {
  const ns = stack.namespace;
  // The target accepts any password (trust auth), so the URL can carry one as a real one would.
  const urlPassword = 'Url-Pa55word-in-connection-string';
  const url = db.url.replace('postgres@', `postgres:${urlPassword}@`);
  expect(url).toContain(urlPassword);
  const manifest = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'app-conn', namespace: ns },
    stringData: { DATABASE_URL: url },
  };
  await stack.core.createNamespacedSecret({
    namespace: ns,
    body: {
      ...manifest,
      metadata: { ...manifest.metadata, annotations: { [LAST_APPLIED]: JSON.stringify(manifest) } },
    },
  });
  const sourced = stack.role('at_rest_sourced');
  const generated = stack.role('at_rest_generated');
  const first = 'Sourced-Password-First-0001';
  const second = 'Sourced-Password-Second-0002';
  await stack.core.createNamespacedSecret({
    namespace: ns,
    body: { metadata: { name: 'app-passwords' }, stringData: { [sourced]: first } },
  });
  await stack.resources.createPolicy('at-rest', {
    connection: { secretRef: { name: 'app-conn' } },
    mode: 'apply',
    approval: 'auto',
    roles: [
      { name: sourced, login: true, password: { secretRef: { name: 'app-passwords' } } },
      { name: generated, login: true, password: { generate: {} } },
    ],
  });
  const literal = 'Literal-Connection-Password-42';
  const [host, port] = ['127.0.0.1', 5432];
  await stack.resources.createPolicy('at-rest-literal', {
    connection: { params: { host, port, dbname: db.database, username: 'postgres', password: literal } },
    mode: 'apply',
    approval: 'auto',
    roles: [{ name: stack.role('at_rest_literal'), login: false }],
  });
  await stack.reconciled('at-rest', 60_000);
  await stack.reconciled('at-rest-literal', 60_000);
  await stack.core.replaceNamespacedSecret({
    namespace: ns,
    name: 'app-passwords',
    body: { metadata: { name: 'app-passwords' }, stringData: { [sourced]: second } },
  });
  await waitFor(
    'the rotated password applied',
    async () => {
      const [row] = await db.sql<{ n: string }>(
        `SELECT count(*) AS n FROM pg_authid WHERE rolname = $1 AND rolpassword IS NOT NULL`,
        [sourced],
      );
      const policy = await stack.resources.policy('at-rest');
      const applied = policy?.status?.applied_password_source_versions?.[sourced] ?? '';
      const secret = await stack.core.readNamespacedSecret({ namespace: ns, name: 'app-passwords' });
      return row?.n === '1' && applied.endsWith(`:${secret.metadata?.resourceVersion}`);
    },
    { timeoutMs: 60_000 },
  );
  const genSecret = await stack.core.readNamespacedSecret({
    namespace: ns,
    name: generatedSecretName('at-rest', generated),
  });
  const decode = (v: string | undefined) => Buffer.from(v ?? '', 'base64').toString('utf8');
  const needles: Record<string, string> = {
    'URL password': urlPassword,
    'connection URL': url,
    'literal connection password': literal,
    'first sourced password': first,
    'second sourced password': second,
    'generated password': decode(genSecret.data?.['password']),
    'generated verifier': decode(genSecret.data?.['verifier']),
  };
  for (const role of [sourced, generated]) {
    const [row] = await db.sql<{ rolpassword: string }>(
      'SELECT rolpassword FROM pg_authid WHERE rolname = $1',
      [role],
    );
    needles[`verifier of ${role}`] = row!.rolpassword;
  }
  expect(needles['generated password']).toHaveLength(32);

  const nc = await connect({ servers: stack.nats.url });
  try {
    await tap.flush();
    // The tap saw the flow's core NATS traffic: inspections asked and Secrets read (sealed replies).
    expect(wire.some((item) => item.where.startsWith('rp.inspect.request'))).toBe(true);
    expect(wire.some((item) => item.where.startsWith('rp.k8s.secret.read'))).toBe(true);
    const stored = await streamContents(nc);
    // The scan sees the resource stream and the Secret events in it (metadata only).
    expect(stored.some((item) => item.where.includes('.resource.secret.'))).toBe(true);
    const redis = await redisContents(localRedisUrl());
    const logs = logged
      .join('')
      .split('\n')
      .filter((line) => line.trim() !== '');
    // The services' log output: JSON lines from pino, each with a level, a time and the service.
    const records = logs.map(
      (line) => JSON.parse(line) as { level?: string; time?: string; service?: string },
    );
    expect(records.length).toBeGreaterThan(0);
    for (const record of records)
      expect(record).toMatchObject({
        level: expect.any(String),
        service: expect.stringMatching(/^rolepolicy-/),
      });
    const logItems = logs.map((text, i) => ({ where: `log line ${i}`, text }));
    // The Kubernetes Events the services recorded through the gateway (plan computed, approved, applied).
    const events = (await stack.core.listNamespacedEvent({ namespace: ns })).items;
    expect(events.some((e) => e.reason === 'PlanApplied')).toBe(true);
    const eventItems = events.map((e) => ({ where: `Event ${e.metadata?.name}`, text: JSON.stringify(e) }));
    expect(findNeedles([...stored, ...redis, ...logItems, ...eventItems, ...wire], needles)).toEqual([]);
  } finally {
    await nc.drain();
  }
}, 150_000);
