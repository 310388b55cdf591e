// Public surface of @rolepolicy/testing.
// Kubernetes API emulator (tests and `npm run demo` only).
export * from './emulator/index.js';
export {
  apiFailure,
  eventually,
  rawRequest,
  type ApiFailure,
  type RawResponse,
} from './emulator/test-support.js';
export { kubectlFor, KUBECTL, type Kubectl, type KubectlResult } from './emulator/kubectl-runner.js';
export * from './sandbox/index.js';
export * from './spine-standins.js';
export * from './otlp/otlp-receiver.js';
export * from './services/in-process-services.js';
