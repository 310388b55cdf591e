export * from './token-source.js';
export * from './workload-identity.js';
export * from './providers.js';
