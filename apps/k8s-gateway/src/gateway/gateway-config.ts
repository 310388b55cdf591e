// Environment variables of the gateway feature: which cluster and namespaces to watch, the leader
// election Lease, resync and retry bounds. Spread into the k8s-gateway's env spec in config.ts.
import { env, type ConfigOf } from '@rolepolicy/runtime';

/** The gateway feature's variables. */
export const gatewayEnvSpec = {
  KUBECONFIG: env.text(
    'Path of a kubeconfig file; empty uses in-cluster configuration or ~/.kube/config',
    '',
    4096,
  ),
  WATCH_NAMESPACE: env.text('Namespace to watch; empty watches the whole cluster', '', 63),
  LEASE_NAMESPACE: env.text('Namespace of the leader election Lease', 'default', 63),
  LEASE_NAME: env.text('Name of the leader election Lease', 'rolepolicy-k8s-gateway', 253),
  FINGERPRINT_KEY_SECRET: env.text(
    'Secret (in LEASE_NAMESPACE) holding the key of the value fingerprints on the resource stream; created when absent',
    'rolepolicy-fingerprint-key',
    253,
  ),
  GATEWAY_IDENTITY: env.text('Identity written to the Lease; empty uses hostname and process id', '', 253),
  LEASE_DURATION_SECONDS: env.positiveInt(
    'Seconds a leader may go without renewing before a standby takes over',
    10,
  ),
  LEASE_RETRY_MS: env.positiveInt('How often the Lease is renewed (leader) or checked (standby)', 2000),
  RESYNC_INTERVAL_MS: env.positiveInt('How often every watched object is republished', 300_000),
  CONFLICT_RETRIES: env.positiveInt('Attempts of one command against 409 Conflict before redelivery', 5),
  GATEWAY_COMMAND_CONCURRENCY: env.intInRange(
    'Commands the leader applies at once; commands with the same ordering key (one policy, request or ' +
      'access policy) still go one at a time in the order sent',
    1,
    64,
    8,
  ),
  SECRET_READ_POLICY: env.oneOf(
    'Which Secrets the gateway hands to the services: `referenced` (any Secret a rolepolicy.io object names; ' +
      'whoever may create a policy in a namespace may make the controller read any Secret there) or ' +
      '`labelled` (only those also labelled `rolepolicy.io/readable: "true"`; Secrets rolepolicy owns are ' +
      'always readable). ADR 0018',
    ['referenced', 'labelled'],
    'referenced',
  ),
  CLUSTER_ID: env.text(
    'Identity of the cluster on resync markers; empty reads the uid of the kube-system namespace',
    '',
    128,
  ),
} as const;

/** The gateway feature's validated configuration. */
export type GatewayConfig = ConfigOf<typeof gatewayEnvSpec>;
