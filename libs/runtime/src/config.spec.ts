// Configuration comes from environment variables validated at start: a missing or malformed
// variable stops the service with a message naming it (and never echoing a value).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { baseEnvSpec, natsConfigProblems } from './base-config.js';
import { ConfigError, env, loadConfig } from './config.js';
import { natsConnectOptions } from './runtime.module.js';

const spec = {
  ...baseEnvSpec(8084),
  REDIS_URL: env.url('redis', ['redis:']),
};

function problemsOf(source: Record<string, string>): string {
  try {
    loadConfig(spec, source);
  } catch (err) {
    if (err instanceof ConfigError) return err.message;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('configuration from environment variables', () => {
  it('applies defaults to unset variables', () => {
    const config = loadConfig(spec, { REDIS_URL: 'redis://127.0.0.1:6379' });
    expect(config).toMatchObject({
      NATS_URL: ['nats://127.0.0.1:4222'],
      HTTP_PORT: 8084,
      HTTP_HOST: '0.0.0.0',
      LOG_LEVEL: 'log',
    });
  });

  it('parses given values', () => {
    const config = loadConfig(spec, {
      REDIS_URL: 'redis://r:6379',
      HTTP_PORT: '9000',
      NATS_URL: 'nats://a:4222, nats://b:4222',
    });
    expect(config.HTTP_PORT).toBe(9000);
    expect(config.NATS_URL).toEqual(['nats://a:4222', 'nats://b:4222']);
  });

  it('names a missing required variable', () => {
    expect(problemsOf({})).toContain('REDIS_URL is required but not set');
  });

  it('names a malformed variable', () => {
    expect(problemsOf({ REDIS_URL: 'redis://r', HTTP_PORT: 'eighty' })).toContain(
      'HTTP_PORT must be a port number',
    );
    expect(problemsOf({ REDIS_URL: 'redis://r', HTTP_PORT: '70000' })).toContain('HTTP_PORT');
    expect(problemsOf({ REDIS_URL: 'redis://r', LOG_LEVEL: 'loud' })).toContain('LOG_LEVEL must be one of');
  });

  it('reports every bad variable at once', () => {
    const message = problemsOf({ HTTP_PORT: '0', NATS_URL: 'http://x' });
    expect(message).toContain('HTTP_PORT');
    expect(message).toContain('NATS_URL must use nats: or tls:');
    expect(message).toContain('REDIS_URL');
  });

  it('never echoes a value, which may carry credentials', () => {
    const message = problemsOf({ REDIS_URL: 'http://user:hunter2@redis:6379' });
    expect(message).toContain('REDIS_URL must use redis:');
    expect(message).not.toContain('hunter2');
  });
});

describe('NATS credentials and TLS', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'rp-config-'));
  const ca = path.join(dir, 'ca.pem');
  writeFileSync(ca, 'not really a certificate');
  const nkey = path.join(dir, 'seed.nk');
  writeFileSync(nkey, 'SUAIBDPBAUTWCWBKIO6XHQNINK5FWJW4OHLXC3HQ2KFE4PEJUA44CNHTC4\n');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const base = (source: Record<string, string>) =>
    loadConfig(spec, { REDIS_URL: 'redis://r:6379', ...source });

  it('are optional: unset, the service connects without credentials or TLS', () => {
    const config = base({});
    expect(natsConfigProblems(config)).toEqual([]);
    const options = natsConnectOptions('planner', config);
    expect(options).toEqual({
      servers: ['nats://127.0.0.1:4222'],
      name: 'rolepolicy-planner',
      inboxPrefix: '_INBOX_planner',
      maxReconnectAttempts: -1,
      reconnectTimeWait: 500,
      noAsyncTraces: true,
    });
  });

  it('a file variable names an unreadable file without echoing its path', () => {
    const missing = path.join(dir, 'hunter2-missing.pem');
    const message = problemsOf({
      REDIS_URL: 'redis://r:6379',
      NATS_TLS_CA_FILE: missing,
      NATS_CREDS_FILE: dir,
    });
    expect(message).toContain('NATS_TLS_CA_FILE must name a readable file');
    expect(message).toContain('NATS_CREDS_FILE must name a file, not a directory');
    expect(message).not.toContain('hunter2');
  });

  it.each([
    [{ NATS_USER: 'planner' }, 'NATS_PASSWORD is required when NATS_USER is set'],
    [{ NATS_PASSWORD: 'hunter2' }, 'NATS_USER is required when NATS_PASSWORD is set'],
    [{ NATS_TLS_CERT_FILE: 'CA' }, 'NATS_TLS_KEY_FILE is required when NATS_TLS_CERT_FILE is set'],
    [{ NATS_USER: 'u', NATS_PASSWORD: 'hunter2', NATS_NKEY_SEED_FILE: 'NKEY' }, 'set only one of'],
  ])('%j: %s', (vars, problem) => {
    const resolved = Object.fromEntries(
      Object.entries(vars).map(([k, v]) => [k, v === 'CA' ? ca : v === 'NKEY' ? nkey : v]),
    );
    const problems = natsConfigProblems(base(resolved));
    expect(problems.map((p) => `${p.name} ${p.problem}`).join('; ')).toContain(problem);
    expect(JSON.stringify(problems)).not.toContain('hunter2');
  });

  it('user and password, TLS files and the private inbox reach the connect options', () => {
    const options = natsConnectOptions(
      'executor',
      base({ NATS_USER: 'executor', NATS_PASSWORD: 'pw', NATS_TLS_CA_FILE: ca, NATS_URL: 'tls://nats:4222' }),
    );
    expect(options).toMatchObject({
      servers: ['tls://nats:4222'],
      user: 'executor',
      pass: 'pw',
      tls: { caFile: ca },
      inboxPrefix: '_INBOX_executor',
    });
  });

  it('an nkey seed file becomes an authenticator', () => {
    const options = natsConnectOptions('inspector', base({ NATS_NKEY_SEED_FILE: nkey }));
    expect(typeof options.authenticator).toBe('function');
    expect(options.user).toBeUndefined();
  });
});
