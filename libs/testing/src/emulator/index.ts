// Public surface of the Kubernetes API emulator (tests and the demo only; never production code).
// See docs/emulator.md for what it implements and where it differs from kube-apiserver.
export { startEmulator, type Emulator, type EmulatorOptions, type EmulatorUser } from './start.js';
export type { AuthenticationOptions } from './access/access-control.js';
export { ADMIN_USER, parseTokenFile, type TokenUser } from './access/authn.js';
export {
  installDeployAccess,
  serviceAccountUser,
  INSTALL_NAMESPACE,
  type DeployAccessOptions,
} from './access/deploy-access.js';
export type {
  AdmissionCause,
  AdmissionHook,
  AdmissionOutcome,
  AdmissionRequest,
  KubeObject,
  ObjectMeta,
  OwnerReference,
  PrinterColumn,
  ResourceType,
  StatusBody,
} from './types.js';
export { readCrdManifests } from './crd-files.js';
export type { RequestHook } from './server.js';
