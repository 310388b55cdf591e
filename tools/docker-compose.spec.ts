// docker-compose.yml stays consistent with what the services read: every service variable it sets is
// declared in that app's env spec, the values pass validation, and the published port is the HTTP_PORT.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { loadConfig, type EnvSpec } from '@rolepolicy/runtime';
import { inspectSealEnv } from '@rolepolicy/testing';
import { k8sGatewayEnvSpec } from '../apps/k8s-gateway/src/config.js';
import { inspectorEnvSpec } from '../apps/inspector/src/config.js';
import { plannerEnvSpec } from '../apps/planner/src/config.js';
import { executorEnvSpec } from '../apps/executor/src/config.js';
import { accessSchedulerEnvSpec } from '../apps/access-scheduler/src/config.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const standIn = fileURLToPath(import.meta.url);

const SPECS: Readonly<Record<string, EnvSpec>> = {
  'k8s-gateway': k8sGatewayEnvSpec,
  inspector: inspectorEnvSpec,
  planner: plannerEnvSpec,
  executor: executorEnvSpec,
  'access-scheduler': accessSchedulerEnvSpec,
};

type ComposeService = {
  readonly image?: string;
  readonly command?: readonly string[];
  readonly profiles?: readonly string[];
  readonly env_file?: string;
  readonly volumes?: readonly string[];
  readonly build?: { readonly context: string; readonly args?: Readonly<Record<string, string>> };
  readonly environment?: Readonly<Record<string, string>>;
  readonly ports?: readonly string[];
};

const compose = parse(readFileSync(path.join(root, 'docker-compose.yml'), 'utf8')) as {
  readonly services: Readonly<Record<string, ComposeService>>;
};

describe('docker-compose.yml', () => {
  it('runs postgres, nats with JetStream, redis and the five services', () => {
    expect(Object.keys(compose.services).sort()).toEqual(
      [
        'access-scheduler',
        'crds',
        'executor',
        'inspector',
        'k3s',
        'k8s-gateway',
        'nats',
        'nats-dev',
        'planner',
        'postgres',
        'redis',
      ].sort(),
    );
    expect(compose.services['nats']?.command).toContain('-js');
    expect(compose.services['nats-dev']?.profiles).toEqual(['dev']);
  });

  it('runs a real Kubernetes API (k3s) with the CRDs installed before the gateway starts watching it', () => {
    const k3s = compose.services['k3s'] as ComposeService & { privileged?: boolean };
    expect(k3s.image).toMatch(/^rancher\/k3s:v1\.\d+/);
    expect(k3s.command).toEqual(expect.arrayContaining(['server', '--tls-san=k3s']));
    const crds = compose.services['crds'] as ComposeService & {
      depends_on?: Record<string, { condition: string }>;
    };
    expect(crds.volumes).toContain('./deploy/crds:/crds:ro');
    expect(crds.command?.join(' ')).toContain('apply -f /crds');
    expect(crds.depends_on?.['k3s']?.condition).toBe('service_healthy');
    const gateway = compose.services['k8s-gateway'] as ComposeService & {
      depends_on?: Record<string, { condition: string }>;
    };
    expect(gateway.depends_on?.['crds']?.condition).toBe('service_completed_successfully');
    // The kubeconfig the gateway reads is the one the crds job wrote into the shared volume.
    const mount = gateway.volumes?.find((v) => v.startsWith('k3s-kube:'))?.split(':')[1];
    expect(gateway.environment?.['KUBECONFIG']).toBe(`${mount}/compose-kubeconfig.yaml`);
    expect(crds.command?.join(' ')).toContain('> /output/compose-kubeconfig.yaml');
  });

  it('runs NATS with the access-controlled configuration and its secrets from outside git', () => {
    const nats = compose.services['nats'] ?? {};
    expect(nats.command?.join(' ')).toContain('-c /etc/nats/nats-server.conf');
    expect(nats.volumes).toContain('./deploy/nats/nats-server.conf:/etc/nats/nats-server.conf:ro');
    expect(nats.env_file).toBe('deploy/nats/secrets/nats.env');
    expect(readFileSync(path.join(root, '.gitignore'), 'utf8')).toContain('deploy/nats/secrets/');
    const config = readFileSync(path.join(root, 'deploy/nats/nats-server.conf'), 'utf8');
    expect(config).toMatch(/cipher: chachapoly\s+key: \$RP_JS_KEY/);
    for (const value of Object.values(nats.environment ?? {}))
      expect(value).toMatch(/^\/etc\/nats\/secrets\//);
  });

  it.each(Object.keys(SPECS))('%s connects over TLS as its own NATS user', (app) => {
    const environment = compose.services[app]?.environment ?? {};
    expect(environment['NATS_URL']).toBe('tls://nats:4222');
    expect(environment['NATS_USER']).toBe(app);
    const variable = `RP_NATS_PASSWORD_${app.toUpperCase().replace(/-/g, '_')}`;
    // Interpolated by compose from the generated env file: no password in the compose file.
    expect(environment['NATS_PASSWORD']).toMatch(new RegExp(`^\\$\\{${variable}:\\?`));
    const config = readFileSync(path.join(root, 'deploy/nats/nats-server.conf'), 'utf8');
    expect(config).toContain(`user: ${app}\n      password: $${variable}\n`);
    expect(compose.services[app]?.volumes).toContain(
      `./deploy/nats/secrets/ca.pem:${environment['NATS_TLS_CA_FILE']}:ro`,
    );
  });

  it.each(Object.keys(SPECS))('%s is built from the one Dockerfile with its APP build argument', (app) => {
    expect(compose.services[app]?.build?.args?.['APP']).toBe(app);
    expect(readFileSync(path.join(root, 'Dockerfile'), 'utf8')).toContain('dist/apps/${APP}/src/main.js');
  });

  it.each(Object.keys(SPECS))('%s sets only variables its config declares, and they validate', (app) => {
    const spec = SPECS[app] ?? {};
    const environment = compose.services[app]?.environment ?? {};
    for (const name of Object.keys(environment)) expect(Object.keys(spec)).toContain(name);
    // Files are mounted from deploy/nats/secrets, which only generate.sh creates: validate with a stand-in.
    const files = Object.fromEntries(
      Object.keys(environment)
        .filter((name) => name.endsWith('_FILE'))
        .map((name) => [name, standIn]),
    );
    // The seal keys are interpolated from generate.sh's inspect-seal.env: validate with a generated pair.
    const keys = Object.fromEntries(Object.entries(inspectSealEnv()).filter(([name]) => name in environment));
    const config = loadConfig(spec, { ...environment, ...files, ...keys }) as { readonly HTTP_PORT: number };
    expect(compose.services[app]?.ports).toContain(`${config.HTTP_PORT}:${config.HTTP_PORT}`);
  });

  it('every configuration variable of every service is documented in the README', () => {
    const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
    for (const spec of Object.values(SPECS))
      for (const name of Object.keys(spec)) expect(readme).toContain(`\`${name}\``);
  });
});
