// Lists and watches the cluster's ValidatingAdmissionPolicies and their bindings (cluster-scoped, whatever
// WATCH_NAMESPACE says) and publishes whether decisions are authenticated (ADR 0026) on the resource stream:
// at start, at every change of the answer, and again at each resync (the stream keeps the last message).
// An API server that does not serve admissionregistration.k8s.io/v1 (404) or a gateway that may not list
// it (403) is an answer too: unauthenticated, saying which.
import {
  AdmissionregistrationV1Api,
  makeInformer,
  type Informer,
  type KubeConfig,
  type KubernetesListObject,
  type KubernetesObject,
  type ObjectCache,
} from '@kubernetes/client-node';
import { nakDelayMs, type BackoffPolicy, type DecisionAdmissionV1 } from '@rolepolicy/contracts';
import {
  decisionAdmissionState,
  type AdmissionListing,
  type BindingView,
} from './decision-admission-state.js';

const BASE = '/apis/admissionregistration.k8s.io/v1';

/** Receives each state to publish; a throw is retried at the next change or resync. */
export type DecisionAdmissionSink = (state: DecisionAdmissionV1) => Promise<void>;

type Watched = Informer<KubernetesObject> & ObjectCache<KubernetesObject>;

function statusCode(err: unknown): number | undefined {
  const e = err as { code?: unknown; statusCode?: unknown; body?: { code?: unknown } } | undefined;
  const code = e?.code ?? e?.statusCode ?? e?.body?.code;
  return typeof code === 'number' ? code : undefined;
}

/** The decision admission informers of one gateway leader term. */
export class DecisionAdmissionInformers {
  private policies: Watched | undefined;
  private bindings: Watched | undefined;
  private listedPolicies = false;
  private listedBindings = false;
  private problem: AdmissionListing | undefined;
  private failures = 0;
  private restart: NodeJS.Timeout | undefined;
  private resyncTimer: NodeJS.Timeout | undefined;
  private published: string | undefined;
  private stopped = true;

  constructor(
    private readonly kc: KubeConfig,
    private readonly options: {
      readonly sink: DecisionAdmissionSink;
      readonly resyncIntervalMs: number;
      readonly restartBackoff: BackoffPolicy;
      readonly log: { log(message: string): void; warn(message: string): void };
    },
  ) {}

  /** Starts both informers; resolves once both tried their first list (the state is then published). */
  async start(): Promise<void> {
    this.stopped = false;
    const api = this.kc.makeApiClient(AdmissionregistrationV1Api);
    this.policies = this.informer(
      `${BASE}/validatingadmissionpolicies`,
      () => api.listValidatingAdmissionPolicy(),
      () => (this.listedPolicies = true),
    );
    this.bindings = this.informer(
      `${BASE}/validatingadmissionpolicybindings`,
      () => api.listValidatingAdmissionPolicyBinding(),
      () => (this.listedBindings = true),
    );
    await Promise.all([this.startOne(this.policies), this.startOne(this.bindings)]);
    await this.evaluate();
    this.resyncTimer = setInterval(() => void this.evaluate(true), this.options.resyncIntervalMs);
  }

  /** Stops both informers and the resync timer. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.restart) clearTimeout(this.restart);
    if (this.resyncTimer) clearInterval(this.resyncTimer);
    await Promise.all([this.policies?.stop(), this.bindings?.stop()]);
  }

  private informer(
    path: string,
    list: () => Promise<KubernetesListObject<KubernetesObject>>,
    listed: () => void,
  ) {
    const informer = makeInformer(this.kc, path, async () => {
      const result = await list();
      listed();
      this.problem = undefined;
      this.failures = 0;
      setImmediate(() => void this.evaluate());
      return result;
    });
    for (const event of ['add', 'update', 'delete'] as const) informer.on(event, () => void this.evaluate());
    informer.on('error', (err: unknown) => this.failed(informer, err));
    return informer;
  }

  private async startOne(informer: Watched): Promise<void> {
    try {
      await informer.start();
    } catch (err) {
      this.failed(informer, err);
    }
  }

  private failed(informer: Watched, err: unknown): void {
    if (this.stopped) return;
    const code = statusCode(err);
    const message = (err instanceof Error ? err.message : String(err)).split('\n')[0]!;
    this.problem =
      code === 404
        ? { kind: 'not-served' }
        : { kind: 'unreadable', reason: code === 403 ? 'forbidden (grant list and watch)' : message };
    this.failures += 1;
    const delay =
      code === 404 ? this.options.resyncIntervalMs : nakDelayMs(this.failures, this.options.restartBackoff);
    if (code !== 404)
      this.options.log.warn(`admission policy informer failed (${message}); restarting in ${delay} ms`);
    void this.evaluate();
    if (this.restart) clearTimeout(this.restart);
    this.restart = setTimeout(() => {
      this.restart = undefined;
      if (!this.stopped) void this.startOne(informer);
    }, delay);
  }

  private listing(): AdmissionListing | undefined {
    if (this.problem) return this.problem;
    if (!this.listedPolicies || !this.listedBindings) return undefined;
    const bindings: BindingView[] = (this.bindings?.list() ?? []).map((b) => {
      const spec = (b as { spec?: { policyName?: string; validationActions?: string[] } }).spec;
      return {
        name: b.metadata?.name ?? '',
        policyName: spec?.policyName,
        validationActions: spec?.validationActions ?? [],
      };
    });
    const policies = (this.policies?.list() ?? []).map((p) => p.metadata?.name ?? '');
    return { kind: 'listed', policies, bindings };
  }

  /** Publishes the state when it changed (or always, on a resync). */
  private async evaluate(force = false): Promise<void> {
    if (this.stopped) return;
    const listing = this.listing();
    if (listing === undefined) return;
    const state = decisionAdmissionState(listing);
    const key = JSON.stringify(state);
    if (!force && key === this.published) return;
    const previous = this.published;
    this.published = key;
    try {
      await this.options.sink({ ...state, observedAt: new Date().toISOString() });
      if (previous === undefined || JSON.parse(previous).authenticated !== state.authenticated)
        this.options.log.log(
          `decisions are ${state.authenticated ? 'authenticated' : 'unauthenticated'}: ${state.detail}`,
        );
    } catch (err) {
      this.published = previous;
      this.options.log.warn(`publishing the decision admission state failed: ${(err as Error).message}`);
    }
  }
}
