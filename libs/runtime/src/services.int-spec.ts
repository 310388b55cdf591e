// Each of the five service processes validates its environment at start: a malformed or missing
// variable stops the process (status 1) with a message naming the variable and not echoing its value.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnTs } from '@rolepolicy/testing';

const apps = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'apps');

async function run(
  app: string,
  env: Record<string, string>,
): Promise<{ readonly code: number | null; readonly stderr: string }> {
  const child = spawnTs(path.join(apps, app, 'src', 'main.ts'), { env });
  let stderr = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => (stderr += chunk));
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  return { code, stderr };
}

describe('service configuration is validated at start', () => {
  it.each(['k8s-gateway', 'inspector', 'planner', 'executor', 'access-scheduler'])(
    '%s stops with a message naming a malformed variable',
    async (app) => {
      const { code, stderr } = await run(app, {
        HTTP_PORT: 'not-a-port',
        NATS_URL: 'http://user:hunter2@nats:4222',
      });
      expect(code).toBe(1);
      expect(stderr).toContain(`[${app}] invalid configuration`);
      expect(stderr).toContain('HTTP_PORT must be a port number');
      expect(stderr).toContain('NATS_URL must use nats: or tls:');
      expect(stderr).not.toContain('hunter2');
    },
    120_000,
  );

  it('the access-scheduler names a malformed REDIS_URL', async () => {
    const { code, stderr } = await run('access-scheduler', { REDIS_URL: 'postgres://nope' });
    expect(code).toBe(1);
    expect(stderr).toContain('REDIS_URL must use redis: or rediss:');
  }, 120_000);
});
