// The plan's approval identity: a digest over typed effects bound to mode, target identity and managed scope.
// Excludes SQL text, ordering, verifiers and salts, so recomputing an unchanged plan gives the same digest.

import type { Change, RoleAttribute } from '../model/change.js';
import {
  comparePrivileges,
  RECONCILIATION_MODES,
  type Privilege,
  type ReconciliationMode,
} from '../model/vocabulary.js';
import { compareCodePoints } from '../canonical-order.js';
import { canonicalJson } from './canonical-json.js';
import { sha256Digest } from './sha256.js';

/** Encoding tag of `changeDigest`. Change the tag (never the pinned fixture) when the bytes change. */
export const CHANGE_DIGEST_ENCODING = 'rolepolicy.io/approval-effect/v1';

/** Everything a plan approval is bound to. */
export interface ChangeDigestInput {
  readonly mode: ReconciliationMode;
  /**
   * Connection target reference: `namespace/secret/key`, or the params form naming literal values or Secret
   * references for host, port and dbname (the references, never resolved values or credentials).
   */
  readonly target: string;
  /** `system_identifier` as a decimal string, or null when unreadable. */
  readonly targetPhysicalIdentity: string | null;
  /** `logicalFingerprint(host, port, database)`, or null. */
  readonly targetLogicalFingerprint: string | null;
  /** Managed roles and schemas: losing management emits no SQL, so the scope itself is bound. */
  readonly ownedRoles: readonly string[];
  readonly ownedSchemas: readonly string[];
  readonly changes: readonly Change[];
}

/** A change digest and the tag of the bytes it hashes. */
export interface ChangeDigest {
  readonly digest: string;
  readonly encoding: string;
}

/** Raised when a plan cannot be digested without weakening approval (e.g. a password without a source). */
export class ChangeDigestError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ChangeDigestError';
  }
}

const sortedSet = (values: readonly string[]): string[] => [...new Set(values)].sort(compareCodePoints);
const privilegeSet = (values: readonly Privilege[]): Privilege[] =>
  [...new Set(values)].sort(comparePrivileges);

function sortAttributes(attributes: readonly RoleAttribute[]): RoleAttribute[] {
  return attributes
    .map((a) => ({ a, text: canonicalJson(a) }))
    .sort((x, y) => compareCodePoints(x.text, y.text))
    .map(({ a }) => a);
}

/** The typed effect payload of a change: its fields without `kind`, sets sorted, secrets excluded. */
function effectPayload(change: Change): Readonly<Record<string, unknown>> {
  switch (change.kind) {
    case 'set_password': {
      // Bind the source version, never the verifier: a fresh salt must not change the digest,
      // a rotated Secret must. Without a source the approval could not tell rotations apart.
      if (change.password_source.trim().length === 0) {
        throw new ChangeDigestError(
          `set_password for role ${JSON.stringify(change.name)} has no password source`,
        );
      }
      return { name: change.name, password_source: change.password_source };
    }
    case 'ensure_schema_owner_privileges':
    case 'grant':
    case 'revoke':
    case 'set_default_privilege':
    case 'revoke_default_privilege': {
      const { kind: _kind, ...rest } = change;
      return { ...rest, privileges: privilegeSet(change.privileges) };
    }
    case 'alter_role':
      return { name: change.name, attributes: sortAttributes(change.attributes) };
    case 'create_role':
    case 'create_schema':
    case 'alter_schema_owner':
    case 'set_comment':
    case 'add_member':
    case 'remove_member':
    case 'reassign_owned':
    case 'drop_owned':
    case 'terminate_sessions':
    case 'drop_role': {
      const { kind: _kind, ...rest } = change;
      return rest;
    }
    default: {
      const unreachable: never = change;
      return unreachable;
    }
  }
}

/** One effect, externally tagged by kind (`{"grant":{...}}`). */
export function effectOf(change: Change): Readonly<Record<string, unknown>> {
  return { [change.kind]: effectPayload(change) };
}

/** The exact bytes `changeDigest` hashes (exported so fixtures can pin them). */
export function changeDigestDocument(input: ChangeDigestInput): string {
  if (!RECONCILIATION_MODES.includes(input.mode)) {
    throw new ChangeDigestError(`unknown reconciliation mode ${JSON.stringify(input.mode)}`);
  }
  // Effects are sorted by their own canonical text, so emission order never changes the digest. Each effect is
  // encoded once and spliced in; the member order below is byte order (pinned by the fixture test).
  const effects = input.changes.map((change) => canonicalJson(effectOf(change))).sort(compareCodePoints);
  return (
    `{"effect_encoding":${canonicalJson(CHANGE_DIGEST_ENCODING)}` +
    `,"effects":[${effects.join(',')}]` +
    `,"owned_roles":${canonicalJson(sortedSet(input.ownedRoles))}` +
    `,"owned_schemas":${canonicalJson(sortedSet(input.ownedSchemas))}` +
    `,"reconciliation_mode":${canonicalJson(input.mode)}` +
    `,"target":${canonicalJson(input.target)}` +
    `,"target_logical_fingerprint":${canonicalJson(input.targetLogicalFingerprint)}` +
    `,"target_physical_identity":${canonicalJson(input.targetPhysicalIdentity)}}`
  );
}

/**
 * The plan's approval identity (`changeDigest` / `changeDigestEncoding`): `sha256:<hex>` over canonical JSON of
 * the typed effects bound to mode, target reference, physical and logical identity, and owned roles/schemas.
 * Throws `ChangeDigestError` (fail closed) when a `set_password` has no password source.
 */
export function changeDigest(input: ChangeDigestInput): ChangeDigest {
  return { digest: sha256Digest(changeDigestDocument(input)), encoding: CHANGE_DIGEST_ENCODING };
}
