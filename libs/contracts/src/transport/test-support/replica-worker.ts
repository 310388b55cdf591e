// Child-process replica for the spine tests: boots the executor service with the test work handler
// and prints one JSON line per delivery, so the parent can kill it mid-message or count its share.
import { Module } from '@nestjs/common';
import { baseEnvSpec, startService, type ServiceDefinition } from '@rolepolicy/runtime';
import { workContract, workHandlerModule, workTopology, type WorkTopologyNames } from './work.js';
import { deadLetterSubject } from '../../subjects.js';

const names = JSON.parse(process.env['RP_TEST_WORK_NAMES'] ?? '{}') as WorkTopologyNames;
const print = (line: object): void =>
  void process.stdout.write(`${JSON.stringify({ pid: process.pid, ...line })}\n`);

@Module({})
class ReplicaModule {}

/** Stands in for a real service: the same runtime, no feature modules of its own. */
const replica: ServiceDefinition<ReturnType<typeof baseEnvSpec>> = {
  service: 'executor',
  envSpec: baseEnvSpec(0),
  module: ReplicaModule,
};

await startService(replica, {
  env: { ...process.env, LOG_LEVEL: 'error' },
  topology: workTopology(names),
  contracts: [workContract(names.root)],
  deadLetterSubject: (subject) => deadLetterSubject(subject, names.root),
  imports: [workHandlerModule(names.root, (d) => print({ event: 'delivery', ...d }))],
});
print({ event: 'ready' });
