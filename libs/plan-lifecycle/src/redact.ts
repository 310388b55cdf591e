// The secret redaction the planner applies to status and error text lives in @rolepolicy/contracts,
// shared with the Kubernetes Event messages every service sends through the gateway.
export { MAX_ERROR_CHARS, REDACTED, redactSecrets } from '@rolepolicy/contracts';
