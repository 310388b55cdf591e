// Root module of the inspector: reads live PostgreSQL catalogs into snapshots.
// The responder answers `rp.inspect.request` on core NATS; it needs no JetStream consumer.
import { Module } from '@nestjs/common';
import { InspectResponder } from './inspect.responder.js';

/** The inspector's own module; the shared runtime (NATS, health, metrics) is imported around it. */
@Module({
  providers: [InspectResponder],
})
export class InspectorModule {}
