// Where the planner's decisions leave the process: gateway commands (each with an idempotency key of
// its own) and Kubernetes Events (best effort). The reconciler decides; this carries out.
import { randomUUID } from 'node:crypto';
import {
  SUBJECTS,
  executeRequestContract,
  k8sCommandContract,
  k8sCommandSubject,
  policyOrderingKey,
  recordEvent,
  seenOf,
  type JetStreamPublisher,
  type K8sCommandV1,
  type ResourceCache,
  type ResourceSequences,
} from '@rolepolicy/contracts';
import { toExecuteRequestMessage, type PostgresPolicy } from '@rolepolicy/plan-lifecycle';
import type { Prepared } from '../planning/prepare.js';

/** The request a decision's `requestExecution` step carries. */
type ExecutionRequest = Parameters<typeof toExecuteRequestMessage>[0];
import type { UnkeyedCommand } from '../planning/gateway-commands.js';
import type { PlanEvent } from '../planning/plan-events.js';

/** Sends the planner's commands and Events. */
export class CommandSink {
  private readonly session = randomUUID().slice(0, 8);
  private sequence = 0;

  constructor(
    private readonly publisher: Pick<JetStreamPublisher, 'publish'>,
    private readonly log: { warn(m: string): void },
    /** The planner's cache: each execution request says how far it had read policies and plans. */
    private readonly cache?: Pick<ResourceCache, 'appliedSequence'>,
  ) {}

  /** Publishes one gateway command with a unique idempotency key (JetStream dedupes publish retries only). */
  async send(command: UnkeyedCommand): Promise<void> {
    const idempotencyKey = `planner/${command.target.namespace}/${command.target.name}/${command.command}/${this.nextSequence()}`;
    const full = { ...command, idempotencyKey } as K8sCommandV1;
    try {
      await this.publisher.publish(
        k8sCommandContract,
        k8sCommandSubject('planner', command.command),
        full,
        idempotencyKey,
      );
    } catch (error) {
      // Names only (never object contents): which write could not be sent.
      const where = `${command.command} ${command.target.kind} ${command.target.namespace}/${command.target.name}`;
      throw new Error(`${where}: ${error instanceof Error ? error.message : String(error)}`, {
        cause: error,
      });
    }
  }

  /**
   * Asks the executors to run a plan. A request asked again after Skipped or Superseded (`retry` > 0)
   * needs a new idempotency key: the spent one, and its result's, are deduplicated by JetStream.
   */
  async requestExecution(
    request: ExecutionRequest,
    retry: number,
    policy: PostgresPolicy,
    prepared: Prepared,
  ): Promise<void> {
    const keyed =
      retry === 0 ? request : { ...request, idempotencyKey: `${request.idempotencyKey}/retry-${retry}` };
    const message = toExecuteRequestMessage(keyed, {
      target: prepared.target,
      content: policy.spec,
      mode: prepared.desired.reconciliation_mode,
      allowSchemaOwnerTransfers: policy.spec.allow_schema_owner_transfers === true,
      requirePhysicalIdentity: policy.spec.connection.requirePhysicalIdentity === true,
      approvedIdentity: request.approvedIdentity,
      passwordSources: prepared.passwordSources,
      appliedPasswordSourceVersions: policy.status?.applied_password_source_versions ?? {},
      ...(this.cache === undefined ? {} : { resourceSequences: seenBy(this.cache) }),
    });
    await this.publisher.publish(
      executeRequestContract,
      SUBJECTS.executeRequest,
      message,
      message.idempotencyKey,
    );
  }

  /**
   * Best effort, like client-go's recorder: an Event that cannot be sent never fails the pass. In the
   * policy's ordering (ADR 0016), so an Event about a plan created in this pass follows the plan's create.
   */
  async recordEvent({ regarding, event }: PlanEvent, policy: PostgresPolicy): Promise<void> {
    await recordEvent(this.publisher, regarding, event, {
      sender: 'planner',
      orderingKey: policyOrderingKey(policy.metadata.namespace, policy.metadata.name),
      onError: (error) =>
        this.log.warn(
          `Event ${event.reason} for ${regarding.kind} ${regarding.namespace}/${regarding.name} not sent: ${error.message}`,
        ),
    });
  }

  /** A fresh `<session>-<n>` id; command keys and the planner's inspection request ids share it. */
  nextSequence(): string {
    this.sequence += 1;
    return `${this.session}-${this.sequence}`;
  }
}

/**
 * The policy and plan events the cache had applied when the request is sent: the executor's first read waits
 * until its own cache has applied as much, without asking the server (docs/executor.md). A kind not seen yet
 * is left out (sequences start at 1).
 */
export function seenBy(cache: Pick<ResourceCache, 'appliedSequence'>): ResourceSequences {
  return seenOf(cache, ['postgrespolicy', 'postgrespolicyplan']);
}
