// Lease-based leader election on coordination.k8s.io/v1 (client-node has no helper): read the Lease,
// decide with lease-decision.ts, write with its resourceVersion so two candidates cannot both win.
import {
  ApiException,
  CoordinationV1Api,
  V1MicroTime,
  type KubeConfig,
  type V1Lease,
} from '@kubernetes/client-node';
import {
  decideLease,
  leaseSpecFor,
  sameRecord,
  type LeaseObservation,
  type LeaseRecord,
} from './lease-decision.js';

/** Options of {@link LeaderElector}. */
export type LeaderElectorOptions = {
  readonly namespace: string;
  readonly name: string;
  readonly identity: string;
  readonly leaseDurationSeconds: number;
  /** Renew (leader) and retry (standby) period. */
  readonly retryMs: number;
  readonly onStartedLeading: () => Promise<void>;
  readonly onStoppedLeading: () => Promise<void>;
  readonly log: { log(message: string): void; warn(message: string): void };
};

function recordOf(lease: V1Lease): LeaseRecord {
  const renew: unknown = lease.spec?.renewTime;
  return {
    holderIdentity: lease.spec?.holderIdentity,
    leaseDurationSeconds: lease.spec?.leaseDurationSeconds,
    renewTime: renew === undefined ? undefined : renew instanceof Date ? renew.toISOString() : String(renew),
    leaseTransitions: lease.spec?.leaseTransitions,
  };
}

function isConflict(err: unknown): boolean {
  return err instanceof ApiException && (err.code === 409 || err.code === 422);
}

/** Runs the election loop until stopped; at most one replica sees onStartedLeading at a time. */
export class LeaderElector {
  private readonly api: CoordinationV1Api;
  private observation: LeaseObservation | undefined;
  private leading = false;
  private lastRenewMs = 0;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private tickRunning: Promise<void> = Promise.resolve();
  private transition: Promise<void> = Promise.resolve();

  constructor(
    kc: KubeConfig,
    private readonly options: LeaderElectorOptions,
  ) {
    this.api = kc.makeApiClient(CoordinationV1Api);
  }

  /** Whether this replica currently holds the Lease. */
  isLeader(): boolean {
    return this.leading;
  }

  /** Starts the loop (first attempt immediately). */
  start(): void {
    this.stopped = false;
    this.schedule(0);
  }

  /**
   * Stops the loop; a leader steps down and, unless `releaseLease` is false, releases the Lease so a
   * standby need not wait for it to expire. (`false` leaves the Lease as a crashed leader would.)
   */
  async stop(releaseLease = true): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.tickRunning;
    if (this.leading) {
      await this.stepDown('stopping');
      if (releaseLease) await this.release();
    }
    await this.transition;
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.tickRunning = this.tick().finally(() => this.schedule(this.options.retryMs));
    }, delayMs);
  }

  private async tick(): Promise<void> {
    const now = Date.now();
    let lease: V1Lease | undefined;
    try {
      lease = await this.api.readNamespacedLease({
        name: this.options.name,
        namespace: this.options.namespace,
      });
    } catch (err) {
      if (!(err instanceof ApiException && err.code === 404)) return this.renewFailed(err, now);
    }
    if (lease) {
      const record = recordOf(lease);
      if (!this.observation || !sameRecord(this.observation.record, record))
        this.observation = { record, observedAtMs: now };
    } else {
      this.observation = undefined;
    }
    const decision = decideLease(
      this.observation,
      this.options.identity,
      now,
      this.options.leaseDurationSeconds,
    );
    if (decision.kind === 'follow') {
      if (this.leading) await this.stepDown(`lease now held by ${decision.holder}`);
      return;
    }
    const spec = leaseSpecFor(
      decision,
      this.observation?.record,
      this.options.identity,
      this.options.leaseDurationSeconds,
    );
    const stamp = new V1MicroTime(now);
    const body: V1Lease = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { ...(lease?.metadata ?? {}), name: this.options.name, namespace: this.options.namespace },
      spec: {
        ...(lease?.spec ?? {}),
        holderIdentity: spec.holderIdentity,
        leaseDurationSeconds: spec.leaseDurationSeconds,
        leaseTransitions: spec.leaseTransitions,
        renewTime: stamp,
        ...(spec.acquire ? { acquireTime: stamp } : {}),
      },
    };
    try {
      const written =
        decision.kind === 'create'
          ? await this.api.createNamespacedLease({ namespace: this.options.namespace, body })
          : await this.api.replaceNamespacedLease({
              name: this.options.name,
              namespace: this.options.namespace,
              body,
            });
      this.observation = { record: recordOf(written), observedAtMs: now };
      this.lastRenewMs = now;
      if (!this.leading)
        await this.stepUp(
          decision.kind === 'takeover' ? `took over from ${decision.previousHolder ?? 'nobody'}` : 'acquired',
        );
    } catch (err) {
      if (isConflict(err)) {
        // Another replica wrote first: re-read on the next tick.
        if (this.leading) await this.stepDown('lost the lease to a concurrent writer');
        return;
      }
      await this.renewFailed(err, now);
    }
  }

  /** A leader that cannot renew for a whole lease duration must assume a standby took over. */
  private async renewFailed(err: unknown, now: number): Promise<void> {
    const message = err instanceof Error ? err.message.split('\n')[0] : String(err);
    this.options.log.warn(`lease ${this.options.namespace}/${this.options.name}: ${message}`);
    if (this.leading && now - this.lastRenewMs > this.options.leaseDurationSeconds * 1000) {
      await this.stepDown('could not renew the lease in time');
    }
  }

  private async stepUp(why: string): Promise<void> {
    this.leading = true;
    this.options.log.log(`${this.options.identity} is leading (${why})`);
    this.transition = this.transition.then(() => this.options.onStartedLeading());
    await this.transition;
  }

  private async stepDown(why: string): Promise<void> {
    this.leading = false;
    this.options.log.log(`${this.options.identity} stopped leading (${why})`);
    this.transition = this.transition.then(() => this.options.onStoppedLeading());
    await this.transition;
  }

  private async release(): Promise<void> {
    try {
      const lease = await this.api.readNamespacedLease({
        name: this.options.name,
        namespace: this.options.namespace,
      });
      if (lease.spec?.holderIdentity !== this.options.identity) return;
      await this.api.replaceNamespacedLease({
        name: this.options.name,
        namespace: this.options.namespace,
        body: { ...lease, spec: { ...lease.spec, holderIdentity: '', leaseDurationSeconds: 1 } },
      });
    } catch {
      // Best effort: the lease expires on its own.
    }
  }
}
