// Public surface of @rolepolicy/catalog: inspection of a managed scope into a CatalogSnapshot, connection
// handling (URL or params, SET ROLE, timeouts, redaction) and plan execution under an advisory lock.
export {
  DatabaseTargetError,
  inspect,
  inspectWithReviewFacts,
  InspectionError,
  INVALID_DATABASE_TARGET,
  signatureLookup,
  type TargetAddress,
} from './inspect.js';
export {
  CATALOG_FINGERPRINT_VERSION,
  fingerprintScopeOf,
  inspectUnlessUnchanged,
  readFingerprint,
  type ConditionalInspection,
  type ConditionalInspectionOptions,
} from './fingerprint.js';
export {
  connectionSecrets,
  openConnection,
  quoteIdentifier,
  SET_ROLE_PATTERN,
  targetOfUrl,
  withRedaction,
  type CatalogConnection,
  type ConnectionParams,
  type ConnectionSpec,
  type OpenOptions,
} from './connection.js';
export {
  executeStatements,
  executeUnderLock,
  clipStatement,
  ExecutionError,
  isRoleStatement,
  type ExecutableStatement,
  type ExecutionPhases,
  type LockedDecision,
  type PhaseEnd,
  type ServerLock,
} from './execute.js';
export {
  maintenanceLock,
  maintenanceSpec,
  openMaintenanceConnection,
  RoleLockSessions,
  type RoleLockSessionsOptions,
} from './server-lock.js';
export {
  databaseTlsFromConfig,
  SSL_MODES,
  sslModeOf,
  tlsPlan,
  type DatabaseTls,
  type SslMode,
  type TlsPlan,
} from './tls.js';
export { DatabaseError, REDACTED, redactError, redactText, SafeError, type Secret } from './redaction.js';
export { canonicalConfigValue, parseRoleConfig, splitGucList } from './role-config.js';
export type { PgCatalog } from './pg-catalog.tables.js';
export { PrivilegeRepository, type PrivilegeRow } from './privilege.repository.js';
export { renderQuerySnapshots } from './query-snapshots.js';
export {
  readReviewFacts,
  readReviewFactsIn,
  reviewFactsQueryOf,
  type ReviewFactsQuery,
} from './review-facts.js';
export {
  authProblem,
  AZURE_DEFAULT_SCOPE,
  awsRdsIssuer,
  azureIssuer,
  CLOUD_IDENTITY_PROVIDERS,
  CloudIdentityError,
  cloudIdentityProvider,
  DEFAULT_REFRESH,
  GCP_DEFAULT_SCOPE,
  gcpIssuer,
  TokenSource,
  WorkloadIdentity,
  workloadIdentityFromConfig,
  type CloudIdentityProvider,
  type IssuedToken,
  type RefreshPolicy,
  type TokenIssuer,
  type TokenRequest,
  type WorkloadAuth,
} from './identity/index.js';
export { readForGenerate, type GenerateSelection } from './generate-read.js';
export { serverKey } from './server-key.js';
