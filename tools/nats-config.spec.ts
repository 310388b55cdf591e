// deploy/nats/nats-server.conf stays in step with the topology the services ensure: every user may use
// the spine streams and exactly its own durable consumers (by name and filter), subscribes to its own
// inbox, and nobody holds a blanket `>` or `$JS.API.>` grant. The server-side proof is
// libs/runtime/src/nats-access.int-spec.ts; this catches a consumer added to the topology but not here.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  ALL_SPINE_CONSUMERS,
  K8S_COMMAND_SENDERS,
  LEADER_LEASE_BUCKET,
  SNAPSHOT_BUCKET,
  SPINE_CONSUMERS,
  SPINE_STREAMS,
  TOPOLOGY_OWNER,
  k8sCommandSenderPattern,
  kvStreamName,
  objectStreamName,
  type ServiceName,
} from '@rolepolicy/contracts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const config = readFileSync(path.join(root, 'deploy/nats/nats-server.conf'), 'utf8');

/** The text of one user's block, from its `user:` line to the next one. */
function userBlock(user: string): string {
  const start = config.indexOf(`user: ${user}\n`);
  if (start < 0) throw new Error(`no user ${user} in nats-server.conf`);
  const next = config.indexOf('user: ', start + 1);
  return config.slice(start, next < 0 ? undefined : next);
}

/** Quoted subjects of a block. */
const subjects = (block: string): string[] => [...block.matchAll(/"([^"]+)"/g)].map((m) => m[1]!);

const services = Object.keys(SPINE_CONSUMERS) as ServiceName[];

describe('deploy/nats/nats-server.conf', () => {
  it('only the topology owner (the k8s-gateway) creates and updates the spine streams and every durable consumer', () => {
    for (const service of services) {
      const granted = subjects(userBlock(service));
      const owner = service === TOPOLOGY_OWNER;
      for (const stream of SPINE_STREAMS) {
        expect(granted).toContain(`$JS.API.STREAM.INFO.${stream.name}`);
        for (const op of ['CREATE', 'UPDATE'])
          expect(granted.includes(`$JS.API.STREAM.${op}.${stream.name}`)).toBe(owner);
      }
      for (const c of ALL_SPINE_CONSUMERS) {
        expect(granted.includes(`$JS.API.CONSUMER.CREATE.${c.stream}.${c.durable}.${c.filterSubject}`)).toBe(
          owner,
        );
      }
    }
  });

  it.each(services)('%s binds to and consumes its own durable consumers', (service) => {
    const granted = subjects(userBlock(service));
    for (const c of SPINE_CONSUMERS[service]) {
      expect(granted).toContain(`$JS.API.CONSUMER.INFO.${c.stream}.${c.durable}`);
      expect(granted).toContain(`$JS.API.CONSUMER.MSG.NEXT.${c.stream}.${c.durable}`);
      expect(granted).toContain(`$JS.ACK.${c.stream}.${c.durable}.>`);
    }
  });

  it.each(services)('%s sends gateway commands on its own subject only (ADR 0022)', (service) => {
    const granted = subjects(userBlock(service)).filter((s) => s.startsWith('rp.k8s.cmd'));
    const sender = K8S_COMMAND_SENDERS.find((s) => s === service);
    expect(granted).toEqual(sender === undefined ? [] : [k8sCommandSenderPattern(sender)]);
  });

  it.each(services)('%s subscribes to its own inbox and to no other', (service) => {
    const granted = subjects(userBlock(service));
    expect(granted).toContain(`_INBOX_${service}.>`);
    expect(granted.filter((s) => s.startsWith('_INBOX'))).toEqual([`_INBOX_${service}.>`]);
  });

  it.each(services)('%s holds no blanket grant and no delete of streams', (service) => {
    const granted = subjects(userBlock(service));
    for (const broad of ['>', '$JS.API.>', '$JS.>', 'rp.>', '_INBOX.>', '$JS.API.STREAM.>']) {
      expect(granted).not.toContain(broad);
    }
    expect(granted.filter((s) => /STREAM\.DELETE|CONSUMER\.DELETE\.RP_(K8S|EXECUTE|DEAD)/.test(s))).toEqual(
      [],
    );
  });

  it('only the topology owner creates the lease bucket and snapshot store streams; nobody updates or deletes them', () => {
    const stores = [kvStreamName(LEADER_LEASE_BUCKET), objectStreamName(SNAPSHOT_BUCKET)];
    for (const service of services) {
      const granted = subjects(userBlock(service));
      for (const stream of stores) {
        expect(granted.includes(`$JS.API.STREAM.CREATE.${stream}`)).toBe(service === TOPOLOGY_OWNER);
        expect(granted).not.toContain(`$JS.API.STREAM.UPDATE.${stream}`);
        expect(granted).not.toContain(`$JS.API.STREAM.DELETE.${stream}`);
      }
    }
    // No wildcard grant reaches them either.
    expect(config).not.toMatch(/"\$JS\.API\.STREAM\.(CREATE|UPDATE|DELETE)\.[^"]*[*>]/);
  });

  it('only the k8s-gateway publishes resource events and answers Secret requests; replies are allowed where a service answers', () => {
    for (const service of services) {
      const block = userBlock(service);
      const granted = subjects(block);
      const gateway = service === 'k8s-gateway';
      expect(granted.includes('rp.resource.>')).toBe(gateway);
      expect(/subscribe: \{[^}]*rp\.k8s\.secret\.read/.test(block)).toBe(gateway);
      // The gateway answers Secret requests and the inspector snapshot requests; nobody else answers.
      expect(block.includes('allow_responses: true')).toBe(gateway || service === 'inspector');
    }
  });

  it('encrypts JetStream at rest with a key from the environment, and requires TLS', () => {
    expect(config).toMatch(/jetstream \{\s+cipher: chachapoly\s+key: \$RP_JS_KEY\s+\}/);
    expect(config).toMatch(/tls \{\s+cert_file: \$RP_NATS_TLS_CERT\s+key_file: \$RP_NATS_TLS_KEY/);
    expect(config).not.toMatch(/password: [^$\s]/);
  });
});
