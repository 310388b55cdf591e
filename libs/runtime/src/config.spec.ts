// Configuration comes from environment variables validated at start: a missing or malformed
// variable stops the service with a message naming it (and never echoing a value).
import { baseEnvSpec } from './base-config.js';
import { ConfigError, env, loadConfig } from './config.js';

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
