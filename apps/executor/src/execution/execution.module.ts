// Nest module of execution work: the handler on the work subject, the service, and the injected secrets.
// ExecutorModule registers it with the production resolver; tests register it with their own.
import { Module, type DynamicModule } from '@nestjs/common';
import { SUBJECTS } from '@rolepolicy/contracts';
import { executeController } from './execute.controller.js';
import { ExecutionService } from './execution.service.js';
import { EXECUTION_OPTIONS, type ExecutionOptions } from './options.js';

/** Execution feature module. */
@Module({})
export class ExecutionModule {
  /** Serves execution requests on `options.requestSubject` (default `rp.execute.request`). */
  static register(options: ExecutionOptions): DynamicModule {
    return {
      module: ExecutionModule,
      controllers: [executeController(options.requestSubject ?? SUBJECTS.executeRequest)],
      providers: [{ provide: EXECUTION_OPTIONS, useValue: options }, ExecutionService],
    };
  }
}
