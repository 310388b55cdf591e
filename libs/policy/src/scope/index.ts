// Public surface of the managed scope: deriveManagedScope (what inspection reads for one policy).
// libs/catalog takes its result as the exact set of roles, schemas and patterns to read.
export { deriveManagedScope } from './managed-scope.js';
export { unionScopes } from './union-scopes.js';
