// Connection and password-source resolution against a namespace's Secrets (pure; shared by planner and executor).
export * from './secret-data.js';
export * from './resolve-connection.js';
export * from './password-sources.js';
