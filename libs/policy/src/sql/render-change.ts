// Turns one typed change into its statements (executable text + redacted twin), per docs/sql-and-digests.md.
// Exhaustive over change kinds: a new kind fails to compile here until it has a rendering.

import type { Change, ChangeOf, CreateRoleState, RoleAttribute } from '../model/change.js';
import type { DefaultPrivilegeScope } from '../model/state.js';
import { comparePrivileges, type ObjectType, type Privilege } from '../model/vocabulary.js';
import { SqlRenderError } from './errors.js';
import { renderResetConfig, renderSetConfig } from './guc.js';
import { quoteIdent, quoteLiteral, quoteRole, renderGrantee } from './quote.js';
import { renderTargets, type InventoryIndex, type TargetKeyword } from './targets.js';
import type { SqlContext } from './types.js';

/** One rendered statement before it is numbered by change. */
export interface StatementText {
  readonly sql: string;
  readonly redacted: string;
}

/**
 * GRANT/REVOKE of privileges on objects of one keyword and schema to one grantee (never memberships): one
 * statement per object as rendered, merged with compatible ones by `group.ts`. Carries no secret.
 */
export interface AclBatch {
  readonly verb: 'GRANT' | 'REVOKE';
  /** The rendered privilege list (`SELECT, INSERT`). */
  readonly privileges: string;
  readonly keyword: TargetKeyword;
  /** The objects' schema (empty for databases, schemas and the ALL ... IN SCHEMA forms). */
  readonly scope: string;
  /** Rendered objects (`"s"."t"`), one per statement before grouping; empty renders nothing. */
  readonly objects: readonly string[];
  /** The rendered grantee (quoted role or bare PUBLIC). */
  readonly grantee: string;
  /** verb, privileges, keyword and scope in one string: only batches of one family share statements. */
  readonly family: string;
}

/** What one change renders to, in order. */
export type RenderedPart = StatementText | AclBatch;

/** Whether a part is a GRANT/REVOKE batch. */
export const isAclBatch = (part: RenderedPart): part is AclBatch => 'verb' in part;

function aclBatch(
  verb: AclBatch['verb'],
  privileges: string,
  targets: { readonly keyword: TargetKeyword; readonly scope: string; readonly objects: readonly string[] },
  grantee: string,
): AclBatch {
  const { keyword, scope, objects } = targets;
  const family = `${verb}\u0000${privileges}\u0000${keyword}\u0000${scope}`;
  return { verb, privileges, keyword, scope, objects, grantee, family };
}

/** First server version with per-edge INHERIT/ADMIN options and membership grantors. */
export const PG16 = 160000;

/** The redaction placeholder of password statements. */
export const REDACTED = '[REDACTED]';

// A verifier is the only accepted password form: cleartext would be stored in logs and previews by the server.
const SCRAM_VERIFIER = /^SCRAM-SHA-256\$[0-9]+:[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+$/;

// Statements without secrets share one string for both renderings (plans reach tens of thousands of statements).
const plain = (sql: string): StatementText => {
  const text = `${sql};`;
  return { sql: text, redacted: text };
};

function privilegeList(privileges: readonly Privilege[]): string {
  return [...new Set(privileges)].sort(comparePrivileges).join(', ');
}

function flag(on: boolean, name: string): string {
  return on ? name : `NO${name}`;
}

function createRole(name: string, state: CreateRoleState): StatementText[] {
  const parts = [
    `CREATE ROLE ${quoteRole(name)}`,
    flag(state.login, 'LOGIN'),
    flag(state.superuser, 'SUPERUSER'),
    flag(state.createdb, 'CREATEDB'),
    flag(state.createrole, 'CREATEROLE'),
    flag(state.inherit, 'INHERIT'),
    flag(state.replication, 'REPLICATION'),
    flag(state.bypassrls, 'BYPASSRLS'),
  ];
  if (state.connection_limit !== -1) parts.push(`CONNECTION LIMIT ${Math.trunc(state.connection_limit)}`);
  if (state.password_valid_until !== null)
    parts.push(`VALID UNTIL ${quoteLiteral(state.password_valid_until)}`);
  const statements = [plain(parts.join(' '))];
  if (state.comment !== null) statements.push(setComment(name, state.comment));
  return statements;
}

function attributeOption(attribute: Exclude<RoleAttribute, { kind: 'set_config' | 'reset_config' }>): string {
  switch (attribute.kind) {
    case 'login':
    case 'superuser':
    case 'createdb':
    case 'createrole':
    case 'inherit':
    case 'replication':
    case 'bypassrls':
      return flag(attribute.value, attribute.kind.toUpperCase());
    case 'connection_limit':
      return `CONNECTION LIMIT ${Math.trunc(attribute.value)}`;
    case 'valid_until':
      // NULL is not accepted by VALID UNTIL; 'infinity' reads back as "no expiry".
      return `VALID UNTIL ${quoteLiteral(attribute.value ?? 'infinity')}`;
    default: {
      const unreachable: never = attribute;
      return unreachable;
    }
  }
}

function alterRole(name: string, attributes: readonly RoleAttribute[]): StatementText[] {
  const options: string[] = [];
  const config: StatementText[] = [];
  for (const attribute of attributes) {
    if (attribute.kind === 'set_config') {
      config.push(plain(renderSetConfig(name, attribute.parameter, attribute.value)));
    } else if (attribute.kind === 'reset_config') {
      config.push(plain(renderResetConfig(name, attribute.parameter)));
    } else {
      options.push(attributeOption(attribute));
    }
  }
  const head = options.length > 0 ? [plain(`ALTER ROLE ${quoteRole(name)} ${options.join(' ')}`)] : [];
  return [...head, ...config];
}

function setComment(name: string, comment: string | null): StatementText {
  return plain(`COMMENT ON ROLE ${quoteRole(name)} IS ${comment === null ? 'NULL' : quoteLiteral(comment)}`);
}

const DEFAULT_PRIVILEGE_OBJECTS: Partial<Record<ObjectType, string>> = {
  table: 'TABLES',
  sequence: 'SEQUENCES',
  function: 'ROUTINES',
  type: 'TYPES',
  schema: 'SCHEMAS',
};

function defaultPrivilege(
  grant: boolean,
  owner: string,
  scope: DefaultPrivilegeScope,
  onType: ObjectType,
  grantee: string,
  privileges: readonly Privilege[],
): StatementText {
  const objects = DEFAULT_PRIVILEGE_OBJECTS[onType];
  if (objects === undefined || (onType === 'schema' && scope.type !== 'global')) {
    throw new SqlRenderError(
      'unsupported_default_privilege_type',
      `default privileges on ${onType} cannot be rendered for ${scope.type} scope`,
    );
  }
  const inSchema = scope.type === 'schema' ? ` IN SCHEMA ${quoteIdent(scope.schema)}` : '';
  const action = grant
    ? `GRANT ${privilegeList(privileges)} ON ${objects} TO ${renderGrantee(grantee)}`
    : `REVOKE ${privilegeList(privileges)} ON ${objects} FROM ${renderGrantee(grantee)}`;
  return plain(`ALTER DEFAULT PRIVILEGES FOR ROLE ${quoteRole(owner)}${inSchema} ${action}`);
}

function setPassword(name: string, context: SqlContext): StatementText {
  const verifier = Object.hasOwn(context.passwords, name) ? context.passwords[name] : undefined;
  if (verifier === undefined) {
    throw new SqlRenderError(
      'missing_verifier',
      `no password verifier was supplied for role ${JSON.stringify(name)}`,
    );
  }
  if (!SCRAM_VERIFIER.test(verifier)) {
    throw new SqlRenderError(
      'invalid_verifier',
      `the password for role ${JSON.stringify(name)} is not a SCRAM-SHA-256 verifier`,
    );
  }
  const head = `ALTER ROLE ${quoteRole(name)} PASSWORD`;
  return { sql: `${head} ${quoteLiteral(verifier)};`, redacted: `${head} ${quoteLiteral(REDACTED)};` };
}

/**
 * REVOKE, as the grantor when another role granted it: object-level GRANTED BY only accepts the current
 * user, and a superuser's REVOKE acts as the object owner, so a grant made by another role is removed only
 * when revoked as that role.
 */
function renderRevoke(
  change: ChangeOf<'revoke'>,
  context: SqlContext,
  inventory: InventoryIndex,
): RenderedPart[] {
  const revokes = aclBatch(
    'REVOKE',
    privilegeList(change.privileges),
    renderTargets(change, inventory),
    renderGrantee(change.role),
  );
  if (change.grantor === null || revokes.objects.length === 0) return [revokes];
  const restore = context.executorRole == null ? 'RESET ROLE' : `SET ROLE ${quoteRole(context.executorRole)}`;
  return [plain(`SET ROLE ${quoteRole(change.grantor)}`), revokes, plain(restore)];
}

/** GRANT or REVOKE of a role membership, in the form the server version understands. */
function renderMembership(change: ChangeOf<'add_member' | 'remove_member'>, pg16: boolean): RenderedPart {
  if (change.kind === 'add_member') {
    const head = `GRANT ${quoteRole(change.role)} TO ${quoteRole(change.member)}`;
    if (pg16) {
      const admin = change.admin ? ', ADMIN TRUE' : '';
      return plain(`${head} WITH INHERIT ${change.inherit ? 'TRUE' : 'FALSE'}${admin}`);
    }
    // Before 16, inheritance is the member's rolinherit and there is no per-edge option.
    return plain(change.admin ? `${head} WITH ADMIN OPTION` : head);
  }
  const head = `REVOKE ${quoteRole(change.role)} FROM ${quoteRole(change.member)}`;
  // 16+ keeps one edge per grantor; without GRANTED BY a foreign grantor's edge is only warned about.
  return plain(pg16 && change.grantor !== null ? `${head} GRANTED BY ${quoteRole(change.grantor)}` : head);
}

/**
 * Renders one change. Throws `SqlRenderError` (without `changeIndex`) when it cannot.
 * `inventory` is `indexInventory(context.inventory)`, built once per plan.
 */
export function renderChange(change: Change, context: SqlContext, inventory: InventoryIndex): RenderedPart[] {
  const pg16 = context.serverVersionNum >= PG16;
  switch (change.kind) {
    case 'create_role':
      return createRole(change.name, change.state);
    case 'create_schema':
      return [
        plain(
          change.owner === null
            ? `CREATE SCHEMA ${quoteIdent(change.name)}`
            : `CREATE SCHEMA ${quoteIdent(change.name)} AUTHORIZATION ${quoteRole(change.owner)}`,
        ),
      ];
    case 'alter_schema_owner':
      return [plain(`ALTER SCHEMA ${quoteIdent(change.name)} OWNER TO ${quoteRole(change.owner)}`)];
    case 'ensure_schema_owner_privileges':
      return [
        aclBatch(
          'GRANT',
          privilegeList(change.privileges),
          { keyword: 'SCHEMA', scope: '', objects: [quoteIdent(change.name)] },
          quoteRole(change.owner),
        ),
      ];
    case 'alter_role':
      return alterRole(change.name, change.attributes);
    case 'set_comment':
      return [setComment(change.name, change.comment)];
    case 'grant':
      // A wildcard expands to one object per inventory object, all with the same privileges and grantee.
      return [
        aclBatch(
          'GRANT',
          privilegeList(change.privileges),
          renderTargets(change, inventory),
          renderGrantee(change.role),
        ),
      ];
    case 'revoke':
      return renderRevoke(change, context, inventory);
    case 'set_default_privilege':
    case 'revoke_default_privilege':
      return [
        defaultPrivilege(
          change.kind === 'set_default_privilege',
          change.owner,
          change.scope,
          change.on_type,
          change.grantee,
          change.privileges,
        ),
      ];
    case 'add_member':
    case 'remove_member':
      return [renderMembership(change, pg16)];
    case 'reassign_owned':
      return [plain(`REASSIGN OWNED BY ${quoteRole(change.from_role)} TO ${quoteRole(change.to_role)}`)];
    case 'drop_owned':
      return [plain(`DROP OWNED BY ${quoteRole(change.role)}`)];
    case 'terminate_sessions':
      // Qualified: a search_path the database sets must not pick a look-alike (the executor also pins it).
      return [
        plain(
          `SELECT pg_catalog.pg_terminate_backend(pid) FROM pg_catalog.pg_stat_activity WHERE usename = ${quoteLiteral(change.role)} AND pid <> pg_catalog.pg_backend_pid()`,
        ),
      ];
    case 'set_password':
      return [setPassword(change.name, context)];
    case 'drop_role':
      return [plain(`DROP ROLE IF EXISTS ${quoteRole(change.name)}`)];
    default: {
      const unreachable: never = change;
      return unreachable;
    }
  }
}
