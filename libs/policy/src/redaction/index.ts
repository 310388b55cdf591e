// Redaction of Secret-sourced connection values (pure; shared by the catalog, the resolvers and the services).
export * from './secret-values.js';
