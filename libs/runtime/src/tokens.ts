// Injection tokens of the runtime module; feature modules inject these instead of building clients.
// Symbols, so two libraries can never collide on a string token.

/** The service's open NatsConnection (closed by the runtime at shutdown). */
export const NATS_CONNECTION = Symbol('rp.nats-connection');
/** The service's validated configuration object. */
export const SERVICE_CONFIG = Symbol('rp.service-config');
/** The service's {@link ServiceMetrics}. */
export const SERVICE_METRICS = Symbol('rp.service-metrics');
/** The service's dependency checks (array of {@link DependencyCheck}). */
export const DEPENDENCY_CHECKS = Symbol('rp.dependency-checks');
/** The service name, e.g. `executor`. */
export const SERVICE_NAME = Symbol('rp.service-name');
/** The service's {@link AuditSink}: where audit records are written (docs/audit.md). */
export const AUDIT_LOG = Symbol('rp.audit-log');
