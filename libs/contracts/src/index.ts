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
export * from './messages/resync-request.js';
export * from './messages/k8s-command.js';
export * from './messages/inspect-request.js';
export * from './messages/inspect-reply.js';
export * from './messages/execute-request.js';
export * from './messages/execute-result.js';
export * from './messages/dead-letter.js';
export * from './spine.js';
export * from './cache/resource-cache.js';
export * from './cache/resync.js';
export * from './transport/backoff.js';
export * from './transport/outcome.js';
export * from './transport/jetstream.context.js';
export * from './transport/jetstream.server.js';
export * from './transport/publisher.js';
export * from './transport/error-passthrough.filter.js';
