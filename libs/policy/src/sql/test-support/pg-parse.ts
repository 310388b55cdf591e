// Test support: parses rendered SQL with PostgreSQL's own parser (libpg-query, WebAssembly) and reduces each
// statement to the parts a reviewer cares about (statement kind, identifiers, literals, PUBLIC vs role).

import { loadModule, parseSync } from 'libpg-query';

/** A role specifier as the server's grammar resolved it. */
export type ParsedRole = { readonly public: true } | { readonly role: string };

/** One parsed statement, reduced. */
export type ParsedStatement = Readonly<Record<string, unknown>> & { readonly kind: string };

type Node = Readonly<Record<string, unknown>>;

const asNode = (value: unknown): Node => (value ?? {}) as Node;
const asList = (value: unknown): readonly Node[] => (Array.isArray(value) ? (value as Node[]) : []);

let loaded: Promise<void> | null = null;

/** Loads the WebAssembly parser once. */
export function loadParser(): Promise<void> {
  loaded ??= loadModule();
  return loaded;
}

function role(spec: unknown): ParsedRole {
  const r = asNode(spec);
  return r['roletype'] === 'ROLESPEC_PUBLIC' ? { public: true } : { role: String(r['rolename']) };
}

function roles(list: unknown): ParsedRole[] {
  return asList(list).map((n) => role(n['RoleSpec']));
}

function svals(list: unknown): string[] {
  return asList(list).map((n) => String(asNode(n['String'])['sval']));
}

function constants(list: unknown): string[] {
  return asList(list).map((n) => String(asNode(asNode(n['A_Const'])['sval'])['sval']));
}

function allLiterals(tree: unknown, out: string[] = []): string[] {
  if (Array.isArray(tree)) for (const item of tree) allLiterals(item, out);
  else if (tree !== null && typeof tree === 'object') {
    for (const [key, value] of Object.entries(tree)) {
      if (key === 'A_Const') {
        const s = asNode(asNode(value)['sval'])['sval'];
        if (s !== undefined) out.push(String(s));
      } else allLiterals(value, out);
    }
  }
  return out;
}

function grantObject(object: Node): string[] {
  if (object['RangeVar']) {
    const rv = asNode(object['RangeVar']);
    return [String(rv['schemaname']), String(rv['relname'])];
  }
  if (object['String']) return [String(asNode(object['String'])['sval'])];
  if (object['List']) return svals(asNode(object['List'])['items']);
  if (object['ObjectWithArgs']) return svals(asNode(object['ObjectWithArgs'])['objname']);
  return ['?'];
}

function grant(g: Node): Node {
  return {
    is_grant: g['is_grant'] === true,
    targtype: g['targtype'],
    objtype: g['objtype'],
    objects: asList(g['objects']).map(grantObject),
    privileges: asList(g['privileges']).map((p) => String(asNode(p['AccessPriv'])['priv_name'])),
    grantees: roles(g['grantees']),
  };
}

function reduce(kind: string, s: Node): ParsedStatement {
  switch (kind) {
    case 'CreateRoleStmt':
      return { kind, role: s['role'] };
    case 'CommentStmt':
      return {
        kind,
        objtype: s['objtype'],
        object: asNode(s['object'])['String'],
        comment: s['comment'] ?? null,
      };
    case 'AlterRoleStmt':
      return {
        kind,
        role: role(s['role']),
        options: asList(s['options']).map((o) => String(asNode(o['DefElem'])['defname'])),
        literals: asList(s['options']).flatMap((o) => {
          const arg = asNode(asNode(o['DefElem'])['arg']);
          return arg['String'] ? [String(asNode(arg['String'])['sval'])] : [];
        }),
      };
    case 'AlterRoleSetStmt': {
      const set = asNode(s['setstmt']);
      return { kind, role: role(s['role']), name: set['name'], args: constants(set['args']) };
    }
    case 'CreateSchemaStmt':
      return { kind, schema: s['schemaname'], owner: s['authrole'] ? role(s['authrole']) : null };
    case 'AlterOwnerStmt':
      return { kind, objectType: s['objectType'], object: svals([s['object']]), owner: role(s['newowner']) };
    case 'GrantStmt':
      return { kind, ...grant(s) };
    case 'AlterDefaultPrivilegesStmt': {
      const options = asList(s['options']).map((o) => asNode(o['DefElem']));
      const option = (name: string): unknown =>
        asNode(asNode(options.find((o) => o['defname'] === name)?.['arg'])['List'])['items'];
      return {
        kind,
        roles: roles(option('roles')),
        schemas: svals(option('schemas')),
        action: grant(asNode(s['action'])),
      };
    }
    case 'GrantRoleStmt':
      return {
        kind,
        is_grant: s['is_grant'] === true,
        granted: asList(s['granted_roles']).map((p) => String(asNode(p['AccessPriv'])['priv_name'])),
        grantees: roles(s['grantee_roles']),
        grantor: s['grantor'] ? role(s['grantor']) : null,
        options: asList(s['opt']).map((o) => String(asNode(o['DefElem'])['defname'])),
      };
    case 'ReassignOwnedStmt':
      return { kind, roles: roles(s['roles']), newrole: role(s['newrole']) };
    case 'DropOwnedStmt':
      return { kind, roles: roles(s['roles']) };
    case 'DropRoleStmt':
      return { kind, roles: roles(s['roles']), missing_ok: s['missing_ok'] === true };
    case 'VariableSetStmt':
      return { kind, name: s['name'], args: constants(s['args']) };
    case 'SelectStmt':
      return { kind, literals: allLiterals(s) };
    default:
      return { kind };
  }
}

/** Parses `sql` (one or more statements) and reduces every statement. Throws on a syntax error. */
export function parseStatements(sql: string): ParsedStatement[] {
  const result = parseSync(sql);
  return (result.stmts ?? []).map((entry) => {
    const stmt = asNode(entry.stmt);
    const kind = Object.keys(stmt)[0]!;
    return reduce(kind, asNode(stmt[kind]));
  });
}
