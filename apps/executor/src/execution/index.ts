// Public surface of the executor's execution feature, for the app module, tests and the demo.
// The decision is pure (decide.ts); the service is the only place with I/O.
export * from './decide.js';
export * from './replan.js';
export * from './result.js';
export * from './secrets.js';
export * from './failures.js';
export * from './options.js';
export * from './execution.service.js';
export * from './execution.module.js';
export * from './fresh-verdict.js';
export * from './cluster-view.js';
export * from './plan-status.js';
export * from './execution-cluster.js';
