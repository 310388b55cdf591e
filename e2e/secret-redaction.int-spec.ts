// The attack of issue 25, item 1, driven with kubectl like a tenant who may only create policies: name a
// Secret of the namespace in a connection part (hostSecret, usernameSecret, dbnameSecret, portSecret, or
// the connection URL) of an observe-mode policy and read the value back from the failed connection's
// status, conditions or Events. Every marker value must be absent from all of them and from every log
// line the services write; the message names the Secret and key instead (ADR 0018).
import { freePort } from '@rolepolicy/testing';
import { Kubectl } from './support/kubectl.js';
import { applyPolicy, PGR, waitEvent, waitLastError } from './support/peer.js';
import { startStack, type Stack, type TargetDatabase } from './stack.js';

let stack: Stack;
let db: TargetDatabase;
let k: Kubectl;

/** Every line the services log (JSON, the most verbose level). */
const logged: string[] = [];
const originalWrite = process.stdout.write;

beforeAll(async () => {
  process.stdout.write = ((chunk: string | Uint8Array) => {
    logged.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
    return true;
  }) as typeof process.stdout.write;
  // The audit records on stdout too (AUDIT_LOG_FILE empty): every line a service writes is checked.
  stack = await startStack({ env: { LOG_LEVEL: 'verbose', LOG_FORMAT: 'json', AUDIT_LOG_FILE: '' } });
  db = await stack.createDatabase('redaction');
  k = new Kubectl(() => stack.emulator.kubeconfigPath, stack.namespace);
}, 45_000);

afterAll(async () => {
  k?.dispose();
  await stack?.stop();
  process.stdout.write = originalWrite;
});

/** Everything a reader of the namespace sees about a policy: the object (status, conditions) and its Events. */
async function visibleText(policy: string): Promise<string> {
  const object = await k.ok(['get', PGR, policy, '-o', 'json']);
  const events = await k.ok([
    'get',
    'events',
    '--field-selector',
    `involvedObject.name=${policy}`,
    '-o',
    'json',
  ]);
  return `${object}\n${events}`;
}

/** The messages only (last_error, condition messages, Event notes), for a marker as short as a port number. */
async function visibleMessages(policy: string): Promise<string> {
  const status = await k.jsonpath(PGR, policy, '{.status.last_error}|{.status.conditions[*].message}');
  const events = await k.ok([
    'get',
    'events',
    '--field-selector',
    `involvedObject.name=${policy}`,
    '-o',
    'jsonpath={range .items[*]}{.message}{.note}{"\\n"}{end}',
  ]);
  return `${status}\n${events}`;
}

const observe = { mode: 'observe', approval: 'manual', roles: [{ name: 'redaction_probe' }] };

test.each([
  {
    part: 'hostSecret',
    marker: 'rp-marker-host-4f1c.invalid',
    params: (secret: string) => ({ hostSecret: { name: secret, key: 'host' }, dbname: 'postgres' }),
    key: 'host',
    // getaddrinfo ENOTFOUND is a permanent DatabaseInspectionFailed, which records no Event of its own.
    event: null,
  },
  {
    part: 'usernameSecret',
    marker: 'rp_marker_user_8d2e',
    params: (secret: string) => ({
      host: '127.0.0.1',
      port: 5432,
      dbname: db.database,
      usernameSecret: { name: secret, key: 'username' },
    }),
    key: 'username',
    event: 'DatabaseConnectionFailed',
  },
  {
    part: 'dbnameSecret',
    marker: 'rp_marker_db_3b7a',
    params: (secret: string) => ({
      host: '127.0.0.1',
      port: 5432,
      username: 'postgres',
      dbnameSecret: { name: secret, key: 'dbname' },
    }),
    key: 'dbname',
    event: 'DatabaseConnectionFailed',
  },
])(
  'a $part naming a Secret shows its Secret and key, never its value, in status, conditions, Events and logs',
  async ({ marker, params, key, event }) => {
    const secret = `victim-${key}`;
    const policy = `probe-${key}`;
    await k.upsertSecret(secret, { [key]: marker, unrelated: 'not-referenced' });
    await applyPolicy(k, policy, { ...observe, connection: { params: params(secret) } });
    const label = `[Secret "${secret}" key "${key}"]`;
    const error = await waitLastError(k, policy, label, 60_000);
    expect(error).not.toContain(marker);
    if (event !== null) await waitEvent(k, policy, event);
    const text = await visibleText(policy);
    // kubectl prints JSON: the label's quotes come escaped.
    expect(text).toContain(JSON.stringify(label).slice(1, -1));
    expect(text.toLowerCase()).not.toContain(marker.toLowerCase());
    expect(logged.join('').toLowerCase()).not.toContain(marker.toLowerCase());
  },
  90_000,
);

test('a portSecret pointing at a closed port never shows the port number', async () => {
  const port = String(await freePort());
  await k.upsertSecret('victim-port', { port });
  await applyPolicy(k, 'probe-port', {
    ...observe,
    connection: {
      params: {
        host: '127.0.0.1',
        dbname: db.database,
        username: 'postgres',
        portSecret: { name: 'victim-port', key: 'port' },
      },
    },
  });
  const label = '[Secret "victim-port" key "port"]';
  const error = await waitLastError(k, 'probe-port', label, 60_000);
  expect(error).toContain('ECONNREFUSED');
  await waitEvent(k, 'probe-port', 'DatabaseConnectionFailed');
  expect(await visibleMessages('probe-port')).not.toContain(port);
  expect(logged.join('')).not.toContain(`:${port}`);
}, 90_000);

test('a connection URL Secret lends no host, port, database or user to a failed connection message', async () => {
  const marker = 'rp_marker_urldb_6c0d';
  const url = new URL(db.url);
  url.pathname = `/${marker}`;
  await k.upsertSecret('victim-url', { DATABASE_URL: url.toString() });
  await applyPolicy(k, 'probe-url', { ...observe, connection: { secretRef: { name: 'victim-url' } } });
  const label = '[Secret "victim-url" key "DATABASE_URL"]';
  const error = await waitLastError(k, 'probe-url', label, 60_000);
  expect(error).toContain('does not exist');
  await waitEvent(k, 'probe-url', 'DatabaseConnectionFailed');
  const text = await visibleText('probe-url');
  expect(text).not.toContain(marker);
  expect(logged.join('')).not.toContain(marker);
}, 90_000);
