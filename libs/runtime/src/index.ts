// Public surface of @rolepolicy/runtime: the shared bootstrap of the five services (config from env,
// NATS connection, /healthz, /readyz, /metrics, JetStream transport wiring).
export * from './config.js';
export * from './base-config.js';
export * from './metrics.js';
export * from './jetstream-metrics.js';
export * from './readiness.js';
export * from './tokens.js';
export * from './health.controller.js';
export * from './runtime.module.js';
export * from './bootstrap.js';
export * from './logging.js';
export * from './audit-log.js';
export * from './keyed-mutex.js';
export * from './slots.js';
export * from './keyed-slots.js';
export * from './decision-admission-report.js';
export * from './keyed-queue.js';
export * from './announce-if-slow.js';
export * from './telemetry/telemetry.js';
