// How the planner and the access-scheduler report unauthenticated decisions (ADR 0026, docs/approvals.md):
// they follow the state the k8s-gateway publishes (DecisionAdmissionWatch), log it once at start and at each
// change, export the gauge `rp_decisions_unauthenticated`, and tell their reconciler when it changes so that
// every waiting plan or request carries the right condition reason. No state yet: unauthenticated.
import type { NatsConnection } from '@nats-io/transport-node';
import { Gauge, type Registry } from 'prom-client';
import { DecisionAdmissionWatch, type DecisionAdmissionV1 } from '@rolepolicy/contracts';

/** Whether decisions are authenticated, and the sentence saying why. */
export type DecisionAuthenticationState = { readonly authenticated: boolean; readonly detail: string };

/** The state before the k8s-gateway said anything. */
export const DECISIONS_NOT_REPORTED: DecisionAuthenticationState = {
  authenticated: false,
  detail: 'the k8s-gateway has not yet reported whether the admission policy rolepolicy-decisions is bound',
};

/** Options of {@link DecisionAdmissionReport.start}. */
export type DecisionAdmissionReportOptions = {
  readonly registry: Registry;
  readonly log: { log(message: string): void; warn(message: string): void };
  /** Called when `authenticated` changed (and with the first state), after the log line. */
  readonly onChange?: (state: DecisionAuthenticationState) => void;
  /** How long start() waits for the gateway's last state before logging (default 500 ms: it comes at once). */
  readonly firstStateWaitMs?: number;
  /** Sandboxes: the resource stream and subject root (defaults: RP_RESOURCES, `rp`). */
  readonly stream?: string;
  readonly subjectRoot?: string;
};

/** The service's view of whether decisions are authenticated. */
export class DecisionAdmissionReport {
  private current: DecisionAuthenticationState = DECISIONS_NOT_REPORTED;
  /** Whether the start-up line was logged. */
  private spoken = false;

  private constructor(
    private readonly watch: DecisionAdmissionWatch | undefined,
    private readonly options: DecisionAdmissionReportOptions,
  ) {}

  /** Registers the gauge, starts following the gateway's state and logs what is known now. */
  static async start(
    nc: NatsConnection,
    options: DecisionAdmissionReportOptions,
  ): Promise<DecisionAdmissionReport> {
    const watch = await DecisionAdmissionWatch.start(nc, {
      ...(options.stream ? { stream: options.stream } : {}),
      ...(options.subjectRoot ? { subjectRoot: options.subjectRoot } : {}),
      logger: options.log,
    });
    const report = new DecisionAdmissionReport(watch, options);
    report.registerGauge();
    watch.onChange((state) => report.update(state));
    if (watch.state !== undefined) report.update(watch.state);
    // The stream holds the last state: it arrives at once unless the gateway never published one.
    if ((await watch.firstState(options.firstStateWaitMs ?? 500)) === undefined) report.say();
    return report;
  }

  /** The current view (unauthenticated until the gateway said otherwise). */
  get state(): DecisionAuthenticationState {
    return this.current;
  }

  async stop(): Promise<void> {
    await this.watch?.stop();
  }

  private registerGauge(): void {
    const state = (): DecisionAuthenticationState => this.current;
    new Gauge({
      name: 'rp_decisions_unauthenticated',
      help: '1 while no admission policy makes decidedBy and requestedBy the caller’s own (rolepolicy-decisions not bound), else 0',
      registers: [this.options.registry],
      collect() {
        this.set(state().authenticated ? 0 : 1);
      },
    });
  }

  /** A new detail alone is kept quietly; a flip of `authenticated` is logged and passed on. */
  private update(published: DecisionAdmissionV1): void {
    const flipped = published.authenticated !== this.current.authenticated || !this.spoken;
    this.current = { authenticated: published.authenticated, detail: published.detail };
    if (!flipped) return;
    this.say();
    this.options.onChange?.(this.current);
  }

  private say(): void {
    this.spoken = true;
    const { authenticated, detail } = this.current;
    if (authenticated) this.options.log.log(`decisions are authenticated: ${detail}`);
    else
      this.options.log.warn(
        `decisions are unauthenticated: ${detail}; decidedBy and requestedBy are only what their writers say`,
      );
  }
}
