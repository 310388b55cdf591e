// Starts what production execution reads and writes in the cluster: a ResourceCache of policies
// plans, ephemeral access requests and access policies (RP_RESOURCES, ensured first so start order does not matter) and the plan status writer.
import { Inject, Injectable, Optional, type BeforeApplicationShutdown } from '@nestjs/common';
import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import {
  APPLIED_SNAPSHOT_MAX_BYTES,
  JetStreamPublisher,
  ResourceCache,
  appliedSnapshotContract,
  encodePayload,
  type AppliedSnapshotV1,
  SPINE_STREAMS,
  STREAMS,
  SUBJECT_ROOT,
  SecretAccessClient,
  bindTopology,
  ensureTopology,
  traceHeaders,
  type StreamDefinition,
} from '@rolepolicy/contracts';
import { cacheClusterView, type ClusterView } from './cluster-view.js';
import type { ClusterOptions } from './options.js';
import { gatewayPlanStatus, type PlanStatusWriter } from './plan-status.js';

/** The executor's cluster access; `null` when the module was registered with a fixed resolver. */
export interface ExecutionCluster {
  readonly view: ClusterView;
  /** The cache behind the view (policies, plans, ephemeral access requests); call `sync()` before reads. */
  readonly cache: Pick<ResourceCache, 'get' | 'list' | 'withFields' | 'sync' | 'reach' | 'isReady'>;
  readonly status: PlanStatusWriter;
  /**
   * Sends a post-apply snapshot to the planners (core NATS, ADR 0017); false when it was too large to send
   * (the planner then inspects as before).
   */
  readonly appliedSnapshot: (message: AppliedSnapshotV1) => boolean;
  readonly stop: () => Promise<void>;
}

/** Injection token of the {@link ExecutionCluster} (or null). */
export const EXECUTION_CLUSTER = Symbol('rp.executor.cluster');

/** The resource stream to ensure: the spine's own, or a sandbox copy under another root and name. */
function resourceStream(options: ClusterOptions): StreamDefinition {
  const spine = SPINE_STREAMS.find((s) => s.name === STREAMS.resources)!;
  if (options.subjectRoot === undefined && options.resourceStream === undefined) return spine;
  const root = options.subjectRoot ?? SUBJECT_ROOT;
  return { ...spine, name: options.resourceStream ?? STREAMS.resources, subjects: [`${root}.resource.>`] };
}

/** Ensures the resource stream, starts the cache (reads await its catch-up) and builds the writer. */
export async function startExecutionCluster(
  nc: NatsConnection,
  publisher: JetStreamPublisher,
  options: ClusterOptions,
): Promise<ExecutionCluster> {
  const stream = resourceStream(options);
  // The spine's stream is the k8s-gateway's to create (ADR 0022): bind to it; a sandbox's is made here.
  const jsm = await jetstreamManager(nc);
  if (stream === SPINE_STREAMS.find((s) => s.name === STREAMS.resources))
    await bindTopology(jsm, { streams: [stream], consumers: [] });
  else await ensureTopology(jsm, { streams: [stream], consumers: [] });
  const cache = await ResourceCache.start(nc, {
    kinds: ['postgrespolicy', 'postgrespolicyplan', 'ephemeralaccessrequest', 'ephemeralaccesspolicy'],
    stream: stream.name,
    subjectRoot: options.subjectRoot ?? SUBJECT_ROOT,
  });
  return {
    cache,
    view: cacheClusterView(
      cache,
      new SecretAccessClient(nc, {
        readSubject: `${options.subjectRoot ?? SUBJECT_ROOT}.k8s.secret.read`,
        generateSubject: `${options.subjectRoot ?? SUBJECT_ROOT}.k8s.secret.generate`,
      }),
    ),
    status: gatewayPlanStatus(publisher, options.subjectRoot ?? SUBJECT_ROOT),
    appliedSnapshot: (message) => {
      const data = encodePayload(appliedSnapshotContract, message);
      if (data.byteLength > APPLIED_SNAPSHOT_MAX_BYTES) return false;
      const headers = traceHeaders();
      nc.publish(
        `${options.subjectRoot ?? SUBJECT_ROOT}.applied.snapshot`,
        data,
        headers ? { headers } : undefined,
      );
      return true;
    },
    stop: () => cache.stop(),
  };
}

/** Stops the cache before the runtime drains the NATS connection. */
@Injectable()
export class ExecutionClusterShutdown implements BeforeApplicationShutdown {
  constructor(@Optional() @Inject(EXECUTION_CLUSTER) private readonly cluster: ExecutionCluster | null) {}

  async beforeApplicationShutdown(): Promise<void> {
    await this.cluster?.stop();
  }
}
