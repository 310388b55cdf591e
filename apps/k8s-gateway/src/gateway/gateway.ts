// One k8s-gateway replica: elects a leader over a Lease; while leading it runs the informers (publishing
// each object's state on its resource subject, Secrets and ConfigMaps as metadata only, and a resync marker
// per kind after each LIST), the command consumer and the Secret responder (values read from the API at the
// moment of use). Standbys stay idle.
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import type { Msg, NatsConnection, Subscription } from '@nats-io/transport-node';
import type {
  BackoffPolicy,
  ConsumerDefinition,
  JetStreamPublisher,
  K8sCommandSender,
  K8sCommandV1,
  MessageContract,
  OutcomeObserver,
  ResourceEventV1,
  ResourceKindToken,
  ResyncMarkerV1,
  SecretResponder,
  DecisionAdmissionV1,
} from '@rolepolicy/contracts';
import {
  DECISION_ADMISSION_TOKEN,
  RESYNC_TOKEN,
  chunkListed,
  decisionAdmissionContract,
  k8sCommandSender,
  decodePayload,
  encodePayload,
  resyncMarkerContract,
  resyncReplyContract,
  resyncRequestContract,
} from '@rolepolicy/contracts';
import { serveSecretAccess } from '@rolepolicy/contracts';
import { absentTargetOutcome } from './absent-target.js';
import { CommandApplier, type WriteGuard } from './command-apply.js';
import { commandRefusal, writeRefusal } from './command-authz.js';
import { CommandConsumer } from './command-consumer.js';
import { TraceLinks, inWatchSpan } from './trace-links.js';
import { withConnectionReuse } from './connection-reuse.js';
import { describeOutcome, type CommandOutcome } from './command-outcome.js';
import { outcomeEvent } from './outcome-event.js';
import type { GatewayConfig } from './gateway-config.js';
import { InformerSet, type KindListing, type ResourceChange } from './informer-set.js';
import { DecisionAdmissionInformers } from './decision-admission.js';
import { ensureFingerprintKey } from './fingerprint-key.js';
import { FenceCheck } from './fence-check.js';
import { LeaderElector } from './leader-election.js';
import type { LogRecord } from '@rolepolicy/runtime';
import { publishedForm } from './published-form.js';
import { apiSecretStore } from './secret-store.js';
import {
  NOT_PUBLISHABLE_REASON,
  isPayloadTooLarge,
  notPublishableConditions,
  notPublishableMessage,
} from './not-publishable.js';

/** Messaging wiring; production uses the spine's contracts and subjects, tests a sandbox's. */
export type GatewayWiring = {
  readonly resourceContract: MessageContract;
  readonly resourceSubject: (kind: ResourceKindToken, namespace: string, name: string) => string;
  readonly commandContract: MessageContract;
  readonly commandConsumer: ConsumerDefinition;
  readonly deadLetterSubject: (subject: string) => string;
  readonly backoff: BackoffPolicy;
  /** Core NATS subjects of Secret reads and generated-password Secrets. */
  readonly secretReadSubject: string;
  readonly secretGenerateSubject: string;
  /**
   * Default true: each command is authorised for the sender its subject names (ADR 0022). Only tests of the
   * applier's mechanics, which send commands no service sends, turn it off; no configuration variable does.
   */
  readonly authorizeSenders?: boolean;
};

/** Queue group of the Secret responder (only the leader subscribes; the group guards a brief overlap). */
export const SECRET_RESPONDER_QUEUE = 'k8s-gateway-secrets';

/** Logger shape (Nest's Logger fits). */
export type GatewayLog = {
  log(message: string | LogRecord): void;
  warn(message: string | LogRecord): void;
  error(message: string | LogRecord): void;
};

/** NATS's default max_payload, used when the server did not say. */
const DEFAULT_MAX_PAYLOAD = 1024 * 1024;

/** True for a publish failure that sending again cannot fix. */
function permanentPublishFailure(error: unknown): boolean {
  const message = error instanceof Error ? error.message : String(error);
  return /max.?payload|cannot be used as a subject token|outside contract|schema/i.test(message);
}

/** Builds the KubeConfig from KUBECONFIG, or in-cluster / ~/.kube/config when empty. */
export function kubeConfigFrom(config: Pick<GatewayConfig, 'KUBECONFIG'>): KubeConfig {
  const kc = new KubeConfig();
  if (config.KUBECONFIG) kc.loadFromFile(config.KUBECONFIG);
  else kc.loadFromDefault();
  return withConnectionReuse(kc);
}

/** A gateway replica. */
export class Gateway {
  private readonly elector: LeaderElector;
  private informers: InformerSet | undefined;
  private admission: DecisionAdmissionInformers | undefined;
  private consumer: CommandConsumer | undefined;
  private secrets: SecretResponder | undefined;
  private fingerprintKey: Uint8Array | undefined;
  private clusterId: string | undefined;
  private watchingStatus = false;
  private resyncResponder: Subscription | undefined;
  /** Outcomes of commands refused because the API does not have their target (no Event is written). */
  private readonly absentTargets = new WeakSet<CommandOutcome>();
  /** The trace of each object's last write, continued by its watch event (docs/tracing.md). */
  private readonly traceLinks = new TraceLinks();
  /** The identity written to the Lease. */
  readonly identity: string;

  constructor(
    private readonly kc: KubeConfig,
    private readonly nats: NatsConnection,
    private readonly publisher: JetStreamPublisher,
    private readonly config: GatewayConfig,
    private readonly wiring: GatewayWiring,
    private readonly log: GatewayLog,
    private readonly observe?: OutcomeObserver,
    /** Told of every command refused for its sender (ADR 0022): the refusals metric. Must not throw. */
    private readonly onRefused?: (sender: string, command: K8sCommandV1) => void,
  ) {
    this.identity = config.GATEWAY_IDENTITY || `${hostname()}-${process.pid}`;
    this.elector = new LeaderElector(kc, {
      namespace: config.LEASE_NAMESPACE,
      name: config.LEASE_NAME,
      identity: this.identity,
      leaseDurationSeconds: config.LEASE_DURATION_SECONDS,
      retryMs: config.LEASE_RETRY_MS,
      onStartedLeading: () => this.lead(),
      onStoppedLeading: () => this.follow(),
      log,
    });
  }

  /** Joins the election. */
  start(): void {
    this.elector.start();
  }

  /** Leaves the election, releasing the Lease when leading (`releaseLease: false` behaves like a crash). */
  async stop(options: { readonly releaseLease?: boolean } = {}): Promise<void> {
    await this.elector.stop(options.releaseLease ?? true);
  }

  /** Whether this replica leads. */
  isLeader(): boolean {
    return this.elector.isLeader();
  }

  /** Republishes every watched object now, then the markers (also runs on the resync timer). */
  async resync(): Promise<void> {
    await this.informers?.resync();
  }

  /**
   * The cluster identity on the markers: CLUSTER_ID, else the uid of the kube-system namespace (read once
   * per leader term; a failure fails the marker, which the informer queue retries).
   */
  private async readClusterId(): Promise<string> {
    if (this.config.CLUSTER_ID) return this.config.CLUSTER_ID;
    if (this.clusterId !== undefined) return this.clusterId;
    try {
      const ns = await this.kc.makeApiClient(CoreV1Api).readNamespace({ name: 'kube-system' });
      if (!ns.metadata?.uid) throw new Error('the kube-system namespace has no uid');
      this.clusterId = ns.metadata.uid;
      return this.clusterId;
    } catch (err) {
      throw new Error(
        `cannot read the cluster identity (set CLUSTER_ID or allow get on namespaces): ${String(err).split('\n')[0]}`,
        { cause: err },
      );
    }
  }

  /** After NATS comes back, sends what the outage kept from going out (within seconds, not a resync). */
  private async watchNatsStatus(): Promise<void> {
    if (this.watchingStatus) return;
    this.watchingStatus = true;
    try {
      for await (const status of this.nats.status()) {
        if (status.type === 'reconnect') this.informers?.republishUnsent();
      }
    } catch {
      // The connection closed: nothing more to watch.
    } finally {
      this.watchingStatus = false;
    }
  }

  private async lead(): Promise<void> {
    const namespace = this.config.WATCH_NAMESPACE || undefined;
    this.clusterId = undefined;
    void this.watchNatsStatus();
    // Nothing is published before the key exists: every Secret event carries its fingerprint.
    this.fingerprintKey = await ensureFingerprintKey(
      this.kc,
      this.config.LEASE_NAMESPACE,
      this.config.FINGERPRINT_KEY_SECRET,
    );
    // The applier (below, once the informers have listed) learns from their events which of its writes they hold.
    let observer: CommandApplier | undefined = undefined;
    const informers = new InformerSet(this.kc, {
      namespace,
      resyncIntervalMs: this.config.RESYNC_INTERVAL_MS,
      restartBackoff: this.wiring.backoff,
      sink: (change) => inWatchSpan(this.traceLinks, change, () => this.publish(change)),
      markerSink: (listing) => this.publishMarker(listing),
      observe: (kind, object, deleted) => observer?.observed(kind.kind, object, deleted),
      permanent: permanentPublishFailure,
      log: this.log,
    });
    this.informers = informers;
    await informers.start();
    // Whether decisions are authenticated (ADR 0026): published beside the resources, never blocking them.
    this.admission = new DecisionAdmissionInformers(this.kc, {
      sink: (state) => this.publishDecisionAdmission(state),
      resyncIntervalMs: this.config.RESYNC_INTERVAL_MS,
      restartBackoff: this.wiring.backoff,
      log: this.log,
    });
    void this.admission.start();
    this.secrets = serveSecretAccess(this.nats, {
      readSubject: this.wiring.secretReadSubject,
      generateSubject: this.wiring.secretGenerateSubject,
      queue: SECRET_RESPONDER_QUEUE,
      store: apiSecretStore(
        this.kc,
        (ns, name) => informers.isReferenced(ns, name),
        this.config.SECRET_READ_POLICY,
        (ns, name) => informers.referencedKeys(ns, name),
      ),
      log: this.log,
    });
    this.resyncResponder = this.nats.subscribe(this.resyncRequestSubject(), {
      callback: (_err, msg) => void this.answerResync(msg),
    });
    const applier = new CommandApplier(this.kc, this.config.CONFLICT_RETRIES, this.identity, (target) =>
      informers.cached(target.apiVersion, target.kind, target.namespace, target.name),
    );
    observer = applier;
    const fence = new FenceCheck(this.nats);
    this.consumer = new CommandConsumer(this.nats, {
      consumer: this.wiring.commandConsumer,
      contract: this.wiring.commandContract,
      deadLetterSubject: this.wiring.deadLetterSubject,
      backoff: this.wiring.backoff,
      apply: async (command, streamSequence, subject) => {
        const sender = k8sCommandSender(subject, this.commandRoot());
        const trusted = this.wiring.authorizeSenders === false;
        const refusal = trusted
          ? undefined
          : commandRefusal(sender, command, this.config.WATCH_NAMESPACE || undefined);
        const outcome: CommandOutcome =
          refusal !== undefined
            ? { kind: 'refused', sender: sender ?? 'unknown', message: refusal }
            : ((await fence.refusal(command, streamSequence)) ??
              this.absentTarget(command) ??
              (await applier.apply(command, trusted ? undefined : this.writeGuard(sender!, command))));
        if (outcome.kind === 'refused') this.onRefused?.(outcome.sender, command);
        if (outcome.kind === 'applied') {
          const { kind, namespace, name } = command.target;
          this.traceLinks.wrote(kind, namespace, name, outcome.resourceVersion);
        }
        return outcome;
      },
      report: (command, outcome) => this.report(command, outcome),
      log: this.log,
      concurrency: this.config.GATEWAY_COMMAND_CONCURRENCY,
      ...(this.observe ? { observe: this.observe } : {}),
    });
    this.consumer.start();
  }

  private async follow(): Promise<void> {
    await this.secrets?.stop();
    this.secrets = undefined;
    this.resyncResponder?.unsubscribe();
    this.resyncResponder = undefined;
    await this.consumer?.stop();
    await this.informers?.stop();
    await this.admission?.stop();
    this.consumer = undefined;
    this.informers = undefined;
    this.admission = undefined;
  }

  private async publish(change: ResourceChange): Promise<void> {
    const { object, kind, reason } = change;
    const meta = object.metadata ?? {};
    if (!meta.namespace || !meta.name) return;
    if (this.fingerprintKey === undefined) throw new Error('no fingerprint key yet');
    const payload: ResourceEventV1 = {
      v: 1,
      type: reason === 'delete' ? 'delete' : 'upsert',
      object: publishedForm(kind.kind, object, this.fingerprintKey) as ResourceEventV1['object'],
      observedAt: new Date().toISOString(),
    };
    // A change is published once even if a re-list sees it again; resyncs always go out.
    const msgId =
      reason === 'resync' ? undefined : `${meta.uid ?? ''}:${meta.resourceVersion ?? ''}:${payload.type}`;
    const subject = this.wiring.resourceSubject(kind.token, meta.namespace, meta.name);
    try {
      // The informer queue retries, holding only the latest state per object.
      await this.publisher.publish(this.wiring.resourceContract, subject, payload, msgId, { retry: false });
    } catch (err) {
      // Retrying cannot help an event larger than the server accepts: say so on the object instead.
      if (!isPayloadTooLarge(err)) throw err;
      if (payload.type === 'delete') {
        // Readers need only the key of a deleted object (one may hold an earlier, smaller version).
        const { name, namespace, uid, resourceVersion } = meta;
        const slim = {
          apiVersion: object.apiVersion ?? kind.apiVersion,
          kind: object.kind ?? kind.kind,
          metadata: { name, namespace, uid, resourceVersion },
        };
        await this.publisher.publish(
          this.wiring.resourceContract,
          subject,
          { ...payload, object: slim as ResourceEventV1['object'] },
          msgId,
        );
        return;
      }
      await this.notPublishable(change, encodePayload(this.wiring.resourceContract, payload).length);
    }
  }

  /** Warns, and on rolepolicy.io kinds sets `Ready=False` reason `NotPublishable` (once, not per event). */
  private async notPublishable(change: ResourceChange, bytes: number): Promise<void> {
    const { object, kind } = change;
    const meta = object.metadata ?? {};
    const where = `${kind.kind} ${meta.namespace}/${meta.name}`;
    const message = notPublishableMessage(bytes, this.nats.info?.max_payload);
    this.log.warn(`${where} not published: ${message}`);
    if (kind.filtered || change.reason === 'delete' || !meta.namespace || !meta.name) return;
    const conditions = notPublishableConditions(kind.kind, object, message, new Date().toISOString());
    if (!conditions) return;
    const outcome = await new CommandApplier(this.kc, this.config.CONFLICT_RETRIES, this.identity).apply({
      v: 1,
      command: 'patch-status',
      target: {
        apiVersion: kind.apiVersion,
        kind: kind.kind,
        namespace: meta.namespace,
        name: meta.name,
        ...(meta.uid ? { uid: meta.uid } : {}),
      },
      status: { conditions },
      ...(meta.resourceVersion ? { resourceVersion: meta.resourceVersion } : {}),
      idempotencyKey: `not-publishable:${meta.uid ?? ''}:${meta.resourceVersion ?? ''}`,
    });
    // A stale object is followed by its newer version, which comes through here again.
    if (outcome.kind !== 'applied' && outcome.kind !== 'stale') {
      this.log.warn(`could not set ${NOT_PUBLISHABLE_REASON} on ${where}: ${describeOutcome(outcome)}`);
    }
  }

  /** The root of the command subjects, `rp` in production (`<root>.k8s.cmd.>`; sandboxes use their own). */
  private commandRoot(): string {
    return this.wiring.commandContract.subject.replace(/\.k8s\.cmd\.>$/, '');
  }

  /** Checks a sender's write on the object as read (ownership, decisions), with the informers' view. */
  private writeGuard(sender: K8sCommandSender, command: K8sCommandV1): WriteGuard {
    const lookup = (kind: string, namespace: string, name: string) =>
      this.informers?.get(kind, namespace, name) as Record<string, unknown> | undefined;
    return { sender, check: (view) => writeRefusal(sender, command, view, lookup) };
  }

  /** `<root>.k8s.resync`, beside the resource subjects' root (sandboxes use their own). */
  private resyncRequestSubject(): string {
    return `${this.wiring.resourceContract.subject.replace(/\.resource\.>$/, '')}.k8s.resync`;
  }

  /** Answers a resync request once fresh markers of the asked kinds are in the stream. */
  private async answerResync(msg: Msg): Promise<void> {
    const subject = this.resyncRequestSubject();
    const decoded = decodePayload({ ...resyncRequestContract, subject }, msg.data);
    if (!decoded.ok) {
      this.log.warn(`ignored an invalid resync request: ${decoded.detail}`);
      return;
    }
    const published = (await this.informers?.sendMarkers(decoded.value.kinds)) ?? [];
    msg.respond(
      encodePayload(
        { ...resyncReplyContract, subject },
        { v: 1, published: published as typeof decoded.value.kinds },
      ),
    );
  }

  /** Publishes whether decisions are authenticated, on `<resource root>._admission.decisions` (ADR 0026). */
  private async publishDecisionAdmission(state: DecisionAdmissionV1): Promise<void> {
    const root = this.wiring.resourceContract.subject.replace(/\.>$/, '');
    const contract = { ...decisionAdmissionContract, subject: this.wiring.resourceContract.subject };
    const subject = `${root}.${DECISION_ADMISSION_TOKEN}.decisions`;
    await this.publisher.publish(contract, subject, state, undefined, { retry: false });
  }

  /** Publishes a kind's resync marker, in chunks that fit the server's max payload. */
  private async publishMarker(listing: KindListing): Promise<void> {
    const clusterId = await this.readClusterId();
    const root = this.wiring.resourceContract.subject.replace(/\.>$/, '');
    const contract = { ...resyncMarkerContract, subject: this.wiring.resourceContract.subject };
    const chunks = chunkListed(listing.objects, this.nats.info?.max_payload ?? DEFAULT_MAX_PAYLOAD);
    const resyncId = randomUUID();
    const namespace = this.config.WATCH_NAMESPACE || undefined;
    for (const [chunk, objects] of chunks.entries()) {
      const marker: ResyncMarkerV1 = {
        v: 1,
        kind: listing.kind.token,
        clusterId,
        resyncId,
        ...(namespace ? { namespace } : {}),
        ...(listing.listResourceVersion ? { listResourceVersion: listing.listResourceVersion } : {}),
        chunk,
        chunks: chunks.length,
        objects: [...objects],
        observedAt: new Date().toISOString(),
      };
      const subject = `${root}.${listing.kind.token}.${RESYNC_TOKEN}.${chunk}`;
      await this.publisher.publish(contract, subject, marker, undefined, { retry: false });
    }
  }

  /** A command about an object the API does not have (absent-target.ts), remembered so no Event follows. */
  private absentTarget(command: K8sCommandV1): CommandOutcome | undefined {
    const informers = this.informers;
    if (informers === undefined) return undefined;
    const outcome = absentTargetOutcome(command, (kind, namespace, name, uid) =>
      informers.has(kind, namespace, name, uid),
    );
    if (outcome !== undefined) this.absentTargets.add(outcome);
    return outcome;
  }

  /** Tells the sender's side through a Warning Event on the target (visible in kubectl describe). */
  private async report(command: K8sCommandV1, outcome: CommandOutcome): Promise<void> {
    if (this.absentTargets.has(outcome)) return;
    const event = outcomeEvent(command, outcome, new Date());
    if (event === undefined) return;
    const target = command.target;
    try {
      await this.kc
        .makeApiClient(CoreV1Api)
        .createNamespacedEvent({ namespace: target.namespace, body: event });
    } catch (err) {
      this.log.warn(
        `could not record an Event for ${target.kind} ${target.namespace}/${target.name}: ${String(err).split('\n')[0]}`,
      );
    }
  }
}
