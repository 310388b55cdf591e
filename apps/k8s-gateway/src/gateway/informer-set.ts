// Informers (list + watch) for every watched kind, with restart and exponential backoff after errors
// (client-node informers stop on any error but 410, which they answer with a re-list), periodic resync,
// and the Secret/ConfigMap filter: only objects a rolepolicy.io object names or owns are passed on.
import {
  makeInformer,
  type Informer,
  type KubeConfig,
  type KubernetesObject,
  type ObjectCache,
} from '@kubernetes/client-node';
import { nakDelayMs, type BackoffPolicy } from '@rolepolicy/contracts';
import { ownedByRolepolicy, referencedSecretNames } from './references.js';
import { WATCHED_KINDS, collectionPath, listFunction, type WatchedKind } from './watched-kinds.js';

/** Why an object is being passed on. */
export type ChangeReason = 'add' | 'update' | 'delete' | 'resync';

/** One object state to publish. */
export type ResourceChange = {
  readonly kind: WatchedKind;
  readonly reason: ChangeReason;
  readonly object: KubernetesObject;
};

/** Receives every change; failures are logged by the caller and do not stop the informers. */
export type ChangeSink = (change: ResourceChange) => Promise<void>;

/** Options of {@link InformerSet}. */
export type InformerSetOptions = {
  /** Namespace to watch, or undefined for the whole cluster. */
  readonly namespace: string | undefined;
  readonly resyncIntervalMs: number;
  readonly restartBackoff: BackoffPolicy;
  readonly sink: ChangeSink;
  readonly log: { warn(message: string): void };
};

type Running = {
  readonly kind: WatchedKind;
  readonly informer: Informer<KubernetesObject> & ObjectCache<KubernetesObject>;
  failures: number;
  restart: NodeJS.Timeout | undefined;
};

function keyOf(object: KubernetesObject): string {
  return `${object.metadata?.namespace ?? ''}/${object.metadata?.name ?? ''}`;
}

/** The informers of one gateway leader term. */
export class InformerSet {
  private running: Running[] = [];
  private resyncTimer: NodeJS.Timeout | undefined;
  private stopped = true;
  /** `namespace/name` of every Secret some rolepolicy.io object names. */
  private referenced = new Set<string>();
  private queue: Promise<void> = Promise.resolve();
  private starting: Promise<void> = Promise.resolve();

  constructor(
    private readonly kc: KubeConfig,
    private readonly options: InformerSetOptions,
  ) {}

  /** Starts every informer (initial list + watch). */
  async start(): Promise<void> {
    this.stopped = false;
    this.running = WATCHED_KINDS.map((kind) => this.create(kind));
    this.starting = Promise.all(this.running.map((r) => this.startOne(r))).then(() => undefined);
    await this.starting;
    this.resyncTimer = setInterval(() => void this.resync(), this.options.resyncIntervalMs);
  }

  /** Stops every informer and the resync timer. */
  async stop(): Promise<void> {
    this.stopped = true;
    // An informer stopped halfway through its first list would still open its watch afterwards.
    await this.starting;
    if (this.resyncTimer) clearInterval(this.resyncTimer);
    for (const r of this.running) if (r.restart) clearTimeout(r.restart);
    await Promise.all(this.running.map((r) => r.informer.stop()));
    this.running = [];
  }

  /** Passes every cached object on again (level-triggered consumers converge from these). */
  async resync(): Promise<void> {
    for (const r of this.running) {
      for (const object of r.informer.list()) {
        if (this.shouldPublish(r.kind, object)) await this.emit(r.kind, 'resync', object);
      }
    }
  }

  /**
   * Whether a rolepolicy.io object in `namespace` names Secret `name`, asked of the informers' caches now
   * (not of the last refresh, so a policy created a moment ago already counts).
   */
  isReferenced(namespace: string, name: string): boolean {
    return this.running.some(
      (r) =>
        !r.kind.filtered &&
        r.informer.list(namespace).some((object) => referencedSecretNames(object).has(name)),
    );
  }

  private create(kind: WatchedKind): Running {
    const list = listFunction(this.kc, kind, this.options.namespace);
    const running: Running = {
      kind,
      informer: makeInformer(this.kc, collectionPath(kind, this.options.namespace), async () => {
        const result = await list();
        running.failures = 0;
        return result;
      }),
      failures: 0,
      restart: undefined,
    };
    const { informer } = running;
    informer.on('add', (o) => void this.changed(kind, 'add', o));
    informer.on('update', (o) => void this.changed(kind, 'update', o));
    informer.on('delete', (o) => void this.changed(kind, 'delete', o));
    informer.on('error', (err: unknown) => this.failed(running, err));
    return running;
  }

  private async startOne(running: Running): Promise<void> {
    try {
      await running.informer.start();
    } catch (err) {
      this.failed(running, err);
    }
  }

  private failed(running: Running, err: unknown): void {
    if (this.stopped) return;
    running.failures += 1;
    const delay = nakDelayMs(running.failures, this.options.restartBackoff);
    const message = err instanceof Error ? err.message : String(err);
    this.options.log.warn(
      `informer ${running.kind.plural} failed (${message.split('\n')[0]}); restarting in ${delay} ms`,
    );
    if (running.restart) clearTimeout(running.restart);
    running.restart = setTimeout(() => {
      running.restart = undefined;
      if (!this.stopped) void this.startOne(running);
    }, delay);
  }

  private async changed(kind: WatchedKind, reason: ChangeReason, object: KubernetesObject): Promise<void> {
    if (!kind.filtered) {
      await this.emit(kind, reason, object);
      await this.refreshReferences();
      return;
    }
    if (this.shouldPublish(kind, object)) await this.emit(kind, reason, object);
  }

  private shouldPublish(kind: WatchedKind, object: KubernetesObject): boolean {
    if (!kind.filtered) return true;
    if (ownedByRolepolicy(object)) return true;
    return kind.kind === 'Secret' && this.referenced.has(keyOf(object));
  }

  /** Recomputes referenced Secrets; those newly referenced are passed on from the cache at once. */
  private async refreshReferences(): Promise<void> {
    const next = new Set<string>();
    for (const r of this.running) {
      if (r.kind.filtered) continue;
      for (const object of r.informer.list()) {
        for (const name of referencedSecretNames(object))
          next.add(`${object.metadata?.namespace ?? ''}/${name}`);
      }
    }
    const added = [...next].filter((key) => !this.referenced.has(key));
    this.referenced = next;
    if (added.length === 0) return;
    const secrets = this.running.find((r) => r.kind.kind === 'Secret');
    for (const key of added) {
      const [namespace, name] = key.split('/') as [string, string];
      const secret = secrets?.informer.get(name, namespace);
      if (secrets && secret && !ownedByRolepolicy(secret)) await this.emit(secrets.kind, 'resync', secret);
    }
  }

  /** Publishes in the order the informers saw the changes, one at a time. */
  private emit(kind: WatchedKind, reason: ChangeReason, object: KubernetesObject): Promise<void> {
    const send = async () => {
      try {
        await this.options.sink({ kind, reason, object });
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        this.options.log.warn(`publishing ${kind.plural} ${keyOf(object)} failed: ${message}`);
      }
    };
    this.queue = this.queue.then(send);
    return this.queue;
  }
}
