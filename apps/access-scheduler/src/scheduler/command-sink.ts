// Where the access-scheduler's writes leave the process: k8s-gateway commands, each with an idempotency key
// of its own, in the ordering of the object whose pass sends them. The passes decide; this carries out.
import { randomUUID } from 'node:crypto';
import {
  k8sCommandContract,
  k8sCommandSubject,
  type JetStreamPublisher,
  type K8sCommandV1,
} from '@rolepolicy/contracts';
import type { Ref, UnkeyedCommand } from './commands.js';

/** Sends the scheduler's gateway commands. */
export class CommandSink {
  private readonly session = randomUUID().slice(0, 8);
  private sequence = 0;

  constructor(private readonly publisher: Pick<JetStreamPublisher, 'publish'>) {}

  /**
   * Publishes one gateway command with a unique idempotency key, in the ordering of `owner` (the request or
   * access policy whose pass sends it): the gateway applies one owner's commands in the order sent.
   */
  async send(command: UnkeyedCommand, owner: Ref): Promise<void> {
    this.sequence += 1;
    const idempotencyKey = `access-scheduler/${command.target.namespace}/${command.target.name}/${command.command}/${this.session}-${this.sequence}`;
    const orderingKey = `${owner.kind}/${owner.namespace}/${owner.name}`;
    // UnkeyedCommand is K8sCommandV1 with the key omitted per member; the compiler cannot see that adding
    // it back gives the union again.
    const full = { ...command, idempotencyKey, orderingKey } as K8sCommandV1;
    try {
      await this.publisher.publish(
        k8sCommandContract,
        k8sCommandSubject('access-scheduler', command.command),
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
}
