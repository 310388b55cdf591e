// Per-test-file sandboxes on the real local servers (PostgreSQL database, JetStream names, Redis prefix),
// a private nats-server for broker-outage tests, a TCP proxy for database outages, and TypeScript child
// processes.
export * from './ids.js';
export * from './postgres.js';
export * from './embedded-postgres.js';
export * from './nats.js';
export * from './redis.js';
export * from './nats-server.js';
export * from './ts-child.js';
export * from './tcp-proxy.js';
export * from './nats-access.js';
export * from './private-postgres.js';
export * from './token-issuer.js';
export * from './inspect-seal.js';
