// Test-only work item contract and handler module used by the JetStream spine tests (in-process and
// in child processes): the payload tells the handler how to behave, so each rule gets its own message.
import { Controller, Inject, Module, type Type } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { Type as T, type Static } from '@sinclair/typebox';
import { defineContract } from '../../contract.js';
import type { ConsumerDefinition, StreamDefinition, Topology } from '../../topology.js';
import { JetStreamContext } from '../jetstream.context.js';

/** Work item: `behaviour` drives the test handler. */
export const WorkV1 = T.Object(
  {
    v: T.Literal(1),
    id: T.String({ minLength: 1 }),
    behaviour: T.Union([
      T.Literal('ok'),
      T.Literal('fail_once'),
      T.Literal('fail_always'),
      T.Literal('hang_first'),
    ]),
    delayMs: T.Optional(T.Integer({ minimum: 0 })),
  },
  { additionalProperties: false },
);

/** Typed work item. */
export type WorkV1 = Static<typeof WorkV1>;

/** Contract of work items on `<root>.work.>`. */
export function workContract(root: string) {
  return defineContract({ name: 'test-work', subject: `${root}.work.>`, versions: { 1: WorkV1 } });
}

/** One observed delivery. */
export type Delivery = {
  readonly id: string;
  readonly deliveryCount: number;
  readonly phase: 'start' | 'done' | 'threw';
};

/** Names of a test topology: a work queue, a dead-letter stream and one shared durable. */
export type WorkTopologyNames = {
  readonly root: string;
  readonly workStream: string;
  readonly deadStream: string;
  readonly durable: string;
  readonly ackWaitMs: number;
  readonly maxDeliver: number;
};

/** Builds the topology of a test from sandbox names. */
export function workTopology(n: WorkTopologyNames): Topology {
  const streams: StreamDefinition[] = [
    {
      name: n.workStream,
      subjects: [`${n.root}.work.>`],
      retention: 'workqueue',
      maxAgeMs: 600_000,
      duplicateWindowMs: 60_000,
    },
    {
      name: n.deadStream,
      subjects: [`${n.root}.deadletter.>`],
      retention: 'limits',
      maxAgeMs: 600_000,
      duplicateWindowMs: 60_000,
    },
  ];
  const consumers: ConsumerDefinition[] = [
    {
      stream: n.workStream,
      durable: n.durable,
      filterSubject: `${n.root}.work.>`,
      ackWaitMs: n.ackWaitMs,
      maxDeliver: n.maxDeliver,
      maxAckPending: 100,
    },
  ];
  return { streams, consumers };
}

const RECORD = Symbol('record');

/**
 * A module whose handler serves `<root>.work.*` and reports each delivery to `record`.
 * Built per test because the subject (a decorator argument) depends on the sandbox id.
 */
export function workHandlerModule(root: string, record: (d: Delivery) => void): Type<unknown> {
  @Controller()
  class WorkHandler {
    constructor(@Inject(RECORD) private readonly report: (d: Delivery) => void) {}

    @EventPattern<string>(`${root}.work.*`)
    async handle(@Payload() work: WorkV1, @Ctx() ctx: JetStreamContext): Promise<void> {
      const deliveryCount = ctx.getDeliveryCount();
      this.report({ id: work.id, deliveryCount, phase: 'start' });
      if (work.delayMs) await new Promise((r) => setTimeout(r, work.delayMs));
      const fails =
        work.behaviour === 'fail_always' || (work.behaviour === 'fail_once' && deliveryCount === 1);
      if (fails) {
        this.report({ id: work.id, deliveryCount, phase: 'threw' });
        throw new Error(`work ${work.id} failed on purpose`);
      }
      if (work.behaviour === 'hang_first' && deliveryCount === 1) await new Promise(() => undefined);
      this.report({ id: work.id, deliveryCount, phase: 'done' });
    }
  }

  @Module({ controllers: [WorkHandler], providers: [{ provide: RECORD, useValue: record }] })
  class WorkHandlerModule {}

  return WorkHandlerModule;
}
