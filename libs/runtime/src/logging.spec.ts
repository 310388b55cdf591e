// The services' log lines: JSON with the service, level, time and the fields a call passes; secrets
// removed from messages, errors and credential-named fields; and a readable form for terminals.
import { Writable } from 'node:stream';
import pino from 'pino';
import { logRecord, pinoOptions, prettyStream } from './logging.js';

function capture(): { stream: Writable; lines: string[] } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(
        ...chunk
          .toString('utf8')
          .split('\n')
          .filter((l) => l.length > 0),
      );
      done();
    },
  });
  return { stream, lines };
}

test('a record with resource fields becomes one JSON line with those fields', () => {
  const { stream, lines } = capture();
  const logger = pino(pinoOptions('planner', 'log'), stream);
  logger.info(
    logRecord('plan team-a/orders-1: Applied (Executed)', {
      kind: 'PostgresPolicyPlan',
      namespace: 'team-a',
      name: 'orders-1',
      plan: 'orders-1',
      digest: 'sha256:abc',
    }),
  );
  expect(lines).toHaveLength(1);
  expect(JSON.parse(lines[0]!)).toMatchObject({
    level: 'info',
    service: 'rolepolicy-planner',
    msg: 'plan team-a/orders-1: Applied (Executed)',
    kind: 'PostgresPolicyPlan',
    namespace: 'team-a',
    name: 'orders-1',
    plan: 'orders-1',
    digest: 'sha256:abc',
    time: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
  });
});

test('LOG_LEVEL maps onto pino levels: log = info, debug lines dropped at log', () => {
  const { stream, lines } = capture();
  const logger = pino(pinoOptions('executor', 'log'), stream);
  logger.debug('hidden');
  logger.info('shown');
  expect(lines.map((l) => (JSON.parse(l) as { msg: string }).msg)).toEqual(['shown']);
});

test('secrets never reach a line: messages, format arguments, errors and credential fields are redacted', () => {
  const { stream, lines } = capture();
  const logger = pino(pinoOptions('executor', 'verbose'), stream);
  logger.warn('connect to postgres://app:hunter2@db:5432/x failed');
  logger.info(logRecord("ALTER ROLE app PASSWORD 's3cret'", { name: 'app' }));
  logger.error(new Error('password=topsecret rejected'));
  logger.info({ msg: 'connection', password: 'p4ss', params: { token: 't0k', host: 'db' } });
  logger.info('SCRAM %s', 'SCRAM-SHA-256$4096:c2FsdA==$a2V5:c2VydmVy');
  const text = lines.join('\n');
  for (const secret of ['hunter2', 's3cret', 'topsecret', 'p4ss', 't0k', 'c2FsdA=='])
    expect(text).not.toContain(secret);
  expect(text).toContain('postgres://[REDACTED]@db:5432/x');
  expect(JSON.parse(lines[3]!)).toMatchObject({
    password: '[REDACTED]',
    params: { token: '[REDACTED]', host: 'db' },
  });
});

test('LOG_FORMAT=pretty prints the same record readably: time, level, [service] context: message', () => {
  const { stream, lines } = capture();
  const logger = pino(pinoOptions('k8s-gateway', 'log'), prettyStream(stream, false));
  logger.info({ context: 'Gateway', kind: 'ConfigMap' }, 'leading');
  expect(lines[0]).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: \[rolepolicy-k8s-gateway\] Gateway: leading$/);
  expect(lines.join('\n')).toContain('kind: "ConfigMap"');
});
