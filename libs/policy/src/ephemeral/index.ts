// Ephemeral access primitives shared by the access-scheduler, the executor and the planner (ADR 0008).
export * from './duration.js';
export * from './bundle.js';
export * from './naming.js';
export * from './provenance.js';
export * from './held-access.js';
export * from './holders.js';
export * from './scoped-changes.js';
export * from './access-terms.js';
export * from './privileged.js';
export * from './sweep.js';
