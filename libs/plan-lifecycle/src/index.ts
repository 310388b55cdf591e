// Public surface of @rolepolicy/plan-lifecycle, the pure plan lifecycle the planner, executor, access-scheduler
// and k8s-gateway share: decision table, plan and status builders, approval, execution verdicts, retention.
// No I/O here; the services feed it and carry out its steps.
export * from './resources.js';
export * from './conditions.js';
export * from './interval.js';
export * from './backoff.js';
export * from './redact.js';
export * from './approval.js';
export * from './outcome.js';
export * from './computed-plan.js';
export * from './conflict.js';
export * from './conflict-index.js';
export * from './execution-verdict.js';
export * from './sql-storage.js';
export * from './review-storage.js';
export * from './plan-builder.js';
export * from './plan-patches.js';
export * from './policy-status.js';
export * from './retention.js';
export * from './steps.js';
export * from './decide.js';
export * from './execution-report.js';
export * from './messages.js';
export * from './password-secret.js';
export * from './kube-bridge.js';
export * from './policy-events.js';
export { newestFirst, sameEffects, toMillis } from './decision-context.js';
export * from './held-access.js';
export * from './policy-secrets.js';
export * from './condition-reasons.js';
export * from './origin-verdict.js';
