// Execution results are consumed only by the leader (ADR 0011): the durable `planner-execute-results` is
// pulled through the spine's JetStream transport while a term lasts and not at all by a standby, so no
// standby acks a result the leader needs. A result handled when the term has just ended fails its writes
// (NotLeader), is nak'ed and reaches the next leader.
import type { NatsConnection } from '@nats-io/transport-node';
import {
  JetStreamServer,
  SPINE_CONSUMERS,
  SPINE_CONTRACTS,
  SUBJECTS,
  deadLetterSubject,
  type ExecuteResultV1,
  type OutcomeObserver,
} from '@rolepolicy/contracts';

/** Pulls execution results for one leader term. */
export class LeaderResults {
  private server: JetStreamServer | undefined;

  constructor(
    private readonly nats: NatsConnection,
    private readonly observe?: OutcomeObserver,
    /**
     * Results handled at once. One at a time, a fleet's burst of 500 results trailed its applies by 45 s
     * (each handler writes a status and an Event), and the passes that could not wait for them inspected
     * in full. Results of one policy still run in arrival order (the reconciler's per-policy line).
     */
    private readonly concurrency = 1,
  ) {}

  /** Starts pulling; resolves once the consumer is ensured. */
  async start(handle: (result: ExecuteResultV1) => Promise<void>): Promise<void> {
    const server = new JetStreamServer({
      connection: this.nats,
      topology: { streams: [], consumers: SPINE_CONSUMERS.planner },
      // The k8s-gateway creates the durable (ADR 0022); the planner binds to it.
      topologyAccess: 'bind',
      contracts: SPINE_CONTRACTS,
      concurrency: this.concurrency,
      deadLetterSubject: (subject) => deadLetterSubject(subject),
      service: 'planner',
      ...(this.observe ? { observe: this.observe } : {}),
    });
    server.addHandler(SUBJECTS.executeResult, (payload: unknown) => handle(payload as ExecuteResultV1), true);
    this.server = server;
    await new Promise<void>((resolve, reject) =>
      server.listen((error?: unknown) => (error ? reject(error as Error) : resolve())),
    );
  }

  /** Stops pulling; a result in flight finishes first. */
  async stop(): Promise<void> {
    await this.server?.close();
    this.server = undefined;
  }
}
