// Public surface of @rolepolicy/contracts: subjects, versioned payload contracts, JetStream topology
// and the Nest transport that serves @EventPattern handlers from durable pull consumers.
export * from './subjects.js';
export * from './subject-match.js';
export * from './contract.js';
export * from './topology.js';
export * from './ensure-topology.js';
export * from './messages/common.js';
export * from './messages/resource-event.js';
export * from './messages/resync-marker.js';
export * from './messages/decision-admission.js';
export * from './messages/resync-request.js';
export * from './messages/k8s-command.js';
export * from './messages/k8s-event.js';
export * from './messages/inspect-request.js';
export * from './messages/inspect-reply.js';
export * from './messages/execute-request.js';
export * from './messages/execute-result.js';
export * from './messages/applied-snapshot.js';
export * from './messages/scoped-execute.js';
export * from './messages/dead-letter.js';
export * from './spine.js';
export * from './cache/resource-cache.js';
export {
  caughtUpWith,
  type CachedObject,
  type RefreshOptions,
  type ResourceCacheOptions,
  type ResourceChange,
} from './cache/cache-types.js';
export * from './cache/decision-admission-watch.js';
export * from './cache/resync.js';
export * from './cache/shared-request.js';
export { seenOf, type SequencesToApply } from './cache/applied-sequences.js';
export * from './cache/own-writes.js';
export * from './cache/cached-kinds.js';
export * from './cache/indexed-fields.js';
export * from './transport/backoff.js';
export * from './transport/outcome.js';
export * from './transport/jetstream.context.js';
export * from './transport/jetstream.server.js';
export * from './transport/slots.js';
export * from './transport/publisher.js';
export * from './transport/error-passthrough.filter.js';
export * from './messages/secret-access.js';
export * from './secrets/inspect-seal.js';
export * from './secrets/seal.js';
export * from './secrets/secret-client.js';
export * from './secrets/secret-responder.js';
export * from './redact.js';
export * from './audit/audit-record.js';
export * from './audit/audit-builders.js';
export * from './audit/audit-replay.js';
export * from './leases/leader-lease.js';
export * from './stores.js';
export * from './inspect/inspect-client.js';
export * from './secrets/secret-reader.js';
export * from './tracing/trace-context.js';
export * from './tracing/spans.js';
