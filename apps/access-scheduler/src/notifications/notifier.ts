// Derives notifications from the objects the scheduler already follows (plans, policies, access requests and the
// notifications ConfigMaps), level-triggered: on every change and on each periodic rebuild it computes what each
// object shows now and queues one delivery per occurrence and sink; the occurrence id collapses repeats.
import type { Cached, ResourceCache, ResourceChange } from '@rolepolicy/contracts';
import {
  NOTIFICATIONS_CONFIGMAP,
  describeSinkProblems,
  planOccurrences,
  requestOccurrences,
  type Occurrence,
  type PlanLike,
  type RequestLike,
} from '@rolepolicy/policy';
import { NotificationDeliveries, type DeliveryJob } from '../scheduler/queues.js';
import { sinkNamespaces, sinkOf, type PublishedConfigMap } from './sinks.js';

/** Objects the API server stored carry a uid (the occurrences' ids are built on it); others are skipped. */
function fromTheApi<T extends { readonly metadata: { readonly uid?: string | undefined } }>(
  object: T,
): object is T & { readonly metadata: { readonly uid: string } } {
  return typeof object.metadata.uid === 'string';
}

/** What the notifier needs. */
export interface NotifierDeps {
  readonly cache: Pick<ResourceCache, 'get' | 'list' | 'onChange'>;
  /** Queues a delivery; false when it could not (the next rebuild tries again). */
  readonly enqueue: (job: DeliveryJob) => Promise<boolean>;
  /** The operator's namespace: its ConfigMap is the cluster-wide sink. */
  readonly clusterNamespace: string;
  /** Occurrences whose recorded time is older than this are not notified. */
  readonly maxAgeMs: number;
  readonly now?: () => number;
  readonly log: { warn(message: string): void };
  /** Records a Warning Event on an invalid notifications ConfigMap (once per version); failures are logged. */
  readonly reportInvalid?: (configMap: PublishedConfigMap, message: string) => Promise<void>;
  /** Called after each rebuild with the number of valid and invalid sink ConfigMaps. */
  readonly observeSinks?: (valid: number, invalid: number) => void;
}

/** A pending plan is told once its policy's status names it (with its warnings), or after this long anyway. */
const WARNINGS_GRACE_MS = 10_000;
const MAX_REMEMBERED = 100_000;

/** Queues notifications for what the cache shows. */
export class Notifier {
  private unsubscribe: (() => void) | undefined;
  /** Job ids this process has queued (Redis has them too: this only saves round trips). */
  private readonly queued = new Set<string>();
  /** The last state of each request that held access, to tell a revocation when it is deleted. */
  private readonly holders = new Map<string, RequestLike>();
  /** Per object (`kind/namespace/name`), the ids of the occurrences it showed when last seen by this process. */
  private readonly derived = new Map<string, ReadonlySet<string>>();
  /** ConfigMaps reported invalid, by namespace, with the resourceVersion reported. */
  private readonly reported = new Map<string, string>();

  constructor(private readonly deps: NotifierDeps) {}

  start(): void {
    this.unsubscribe = this.deps.cache.onChange((change) => this.onChange(change));
    this.rebuild();
  }

  stop(): void {
    this.unsubscribe?.();
  }

  /** Looks at every plan and request again (after a Redis loss, a ConfigMap fix, a missed queueing). */
  rebuild(): void {
    for (const plan of this.deps.cache.list('postgrespolicyplan')) this.plan(plan);
    for (const request of this.deps.cache.list('ephemeralaccessrequest')) this.request(request);
    let valid = 0;
    let invalid = 0;
    for (const cm of this.deps.cache.list('configmap')) {
      if (cm.metadata.name !== NOTIFICATIONS_CONFIGMAP) continue;
      if (this.checkConfigMap(cm)) valid++;
      else invalid++;
    }
    this.deps.observeSinks?.(valid, invalid);
  }

  private onChange(change: ResourceChange): void {
    switch (change.kind) {
      case 'postgrespolicyplan':
        if (change.object) this.plan(change.object);
        else this.derived.delete(`plan/${change.namespace}/${change.name}`);
        return;
      case 'postgrespolicy':
        // Its status may now name a pending plan, with the warnings.
        for (const plan of this.deps.cache.list('postgrespolicyplan', change.namespace))
          if (plan.spec?.policyRef?.name === change.name) this.plan(plan);
        return;
      case 'ephemeralaccessrequest':
        if (change.object) this.request(change.object);
        else this.deleted(change.namespace, change.name);
        return;
      case 'configmap':
        if (change.object && change.name === NOTIFICATIONS_CONFIGMAP) this.checkConfigMap(change.object);
        return;
      default:
        return;
    }
  }

  private plan(plan: PlanLike | Cached<'postgrespolicyplan'>): void {
    if (plan.metadata === undefined || plan.spec === undefined || !fromTheApi(plan)) return;
    const policy = this.deps.cache.get('postgrespolicy', plan.metadata.namespace, plan.spec.policyRef.name);
    const now = this.now();
    const occurrences = planOccurrences(plan, policy, new Date(now).toISOString()).filter((o) => {
      if (o.type !== 'plan.pending-approval') return true;
      const named = policy?.status?.current_plan_ref?.name === plan.metadata.name;
      const computed = Date.parse(plan.status?.computedAt ?? '');
      return named || !Number.isFinite(computed) || now - computed > WARNINGS_GRACE_MS;
    });
    this.queue(occurrences, `plan/${plan.metadata.namespace}/${plan.metadata.name}`, latestRecorded(plan));
  }

  private request(request: RequestLike | Cached<'ephemeralaccessrequest'>): void {
    if (request.metadata === undefined || request.spec === undefined || !fromTheApi(request)) return;
    const key = `${request.metadata.namespace}/${request.metadata.name}`;
    if (request.status?.activatedAt) this.holders.set(key, request);
    else this.holders.delete(key);
    this.queue(
      requestOccurrences(request, new Date(this.now()).toISOString()),
      `request/${key}`,
      latestRecorded(request),
    );
  }

  private deleted(namespace: string, name: string): void {
    const key = `${namespace}/${name}`;
    const last = this.holders.get(key);
    this.holders.delete(key);
    this.derived.delete(`request/${key}`);
    if (last !== undefined)
      this.queue(
        requestOccurrences(last, new Date(this.now()).toISOString(), true),
        undefined,
        undefined,
        true,
      );
  }

  /** Validates a notifications ConfigMap; an invalid one is reported once per version (field and rule). */
  private checkConfigMap(cm: PublishedConfigMap): boolean {
    const parsed = sinkOf(cm);
    const ns = cm.metadata.namespace;
    if (parsed.ok) {
      this.reported.delete(ns);
      return true;
    }
    const version = cm.metadata.resourceVersion ?? '';
    if (this.reported.get(ns) !== version) {
      this.reported.set(ns, version);
      const problems = describeSinkProblems(parsed.problems);
      this.deps.log.warn(
        `ConfigMap ${ns}/${NOTIFICATIONS_CONFIGMAP} is invalid, no notification goes to its sink: ${problems}`,
      );
      this.deps
        .reportInvalid?.(cm, `no notification goes to this sink: ${problems}`)
        .catch((error: Error) =>
          this.deps.log.warn(
            `Event on ConfigMap ${ns}/${NOTIFICATIONS_CONFIGMAP} not recorded: ${error.message}`,
          ),
        );
    }
    return false;
  }

  /**
   * Queues what is recent. An occurrence with a recorded time is recent within the age limit. One without (a
   * decision written without a condition time) is recent when this process saw the object before without it
   * (it happened now), or, on first sight (a restart, a resync), when the object's latest recorded time is
   * within the limit: so a resync or restart never re-sends an old decision once its job is gone.
   */
  private queue(
    occurrences: readonly Occurrence[],
    objectKey: string | undefined,
    latest: number | undefined,
    seenHappening = false,
  ): void {
    const now = this.now();
    const before = objectKey === undefined ? undefined : this.derived.get(objectKey);
    if (objectKey !== undefined) this.derived.set(objectKey, new Set(occurrences.map((o) => o.id)));
    for (const occurrence of occurrences) {
      if (occurrence.timeRecorded) {
        if (now - Date.parse(occurrence.time) > this.deps.maxAgeMs) continue;
      } else {
        const observed = seenHappening || (before !== undefined && !before.has(occurrence.id));
        if (!observed && (latest === undefined || now - latest > this.deps.maxAgeMs)) continue;
      }
      const lookup = (ns: string, name: string) => this.deps.cache.get('configmap', ns, name);
      for (const sinkNamespace of sinkNamespaces(
        occurrence.namespace,
        occurrence.type,
        this.deps.clusterNamespace,
        lookup,
      )) {
        const id = NotificationDeliveries.jobId({ occurrence, sinkNamespace });
        if (this.queued.has(id)) continue;
        if (this.queued.size >= MAX_REMEMBERED) this.queued.clear();
        this.queued.add(id);
        void this.deps.enqueue({ sinkNamespace, occurrence, queuedAt: now }).then(
          (ok) => {
            if (!ok) this.queued.delete(id);
          },
          () => this.queued.delete(id),
        );
      }
    }
  }

  private now(): number {
    return (this.deps.now ?? Date.now)();
  }
}

const TIME_FIELDS = ['computedAt', 'applyingSince', 'appliedAt', 'failedAt', 'activatedAt', 'endedAt'];

/** The latest time an object records (status times and condition transition times), as epoch ms. */
export function latestRecorded(object: { readonly status?: object | null | undefined }): number | undefined {
  const status = (object.status ?? {}) as Record<string, unknown>;
  const times: unknown[] = TIME_FIELDS.map((f) => status[f]);
  const conditions = Array.isArray(status['conditions'])
    ? (status['conditions'] as Record<string, unknown>[])
    : [];
  for (const c of conditions) times.push(c['lastTransitionTime'], c['last_transition_time']);
  const parsed = times
    .filter((t): t is string => typeof t === 'string')
    .map((t) => Date.parse(t))
    .filter((t) => Number.isFinite(t));
  return parsed.length === 0 ? undefined : Math.max(...parsed);
}
