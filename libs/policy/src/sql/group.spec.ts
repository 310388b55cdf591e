// Statement grouping: fewer statements, the same per-object operations. The property test parses both
// renderings with PostgreSQL's own parser and compares what they do object by object and grantee by grantee.
import fc from 'fast-check';
import type { Change } from '../model/change.js';
import type { InventoryObject } from '../model/snapshot.js';
import type { Privilege } from '../model/vocabulary.js';
import { MAX_LIST_BYTES, MAX_LIST_ITEMS } from './group.js';
import { renderSql } from './render.js';
import { loadParser, parseStatements, type ParsedStatement } from './test-support/pg-parse.js';
import type { SqlContext } from './types.js';

const ctx = (inventory: readonly InventoryObject[] = []): SqlContext => ({
  serverVersionNum: 160004,
  inventory,
  passwords: {},
  executorRole: 'admin',
});
const sqlOf = (changes: readonly Change[], context = ctx()): string[] =>
  renderSql(changes, context).statements.map((s) => s.sql);
const table = (schema: string, name: string): InventoryObject => ({
  kind: 'table',
  schema,
  name,
  owner: 'o',
});
const grant = (role: string, schema: string, name: string, privileges: Privilege[] = ['SELECT']): Change => ({
  kind: 'grant',
  role,
  privileges,
  object_type: 'table',
  schema,
  name,
});
const revoke = (role: string, schema: string, name: string, grantor: string | null = null): Change => ({
  kind: 'revoke',
  role,
  privileges: ['INSERT'],
  object_type: 'table',
  schema,
  name,
  grantor,
});

beforeAll(async () => {
  await loadParser();
});

describe('grouping GRANT statements', () => {
  it('one statement per privilege set, keyword and schema; objects with the same grantees share it', () => {
    expect(
      sqlOf([
        grant('a', 's', 't1'),
        grant('b', 's', 't1'),
        grant('a', 's', 't2'),
        grant('b', 's', 't2'),
        grant('a', 's', 't3'),
        grant('a', 'other', 't1'),
        grant('a', 's', 't4', ['SELECT', 'INSERT']),
      ]),
    ).toEqual([
      'GRANT SELECT ON TABLE "s"."t1", "s"."t2" TO "a", "b";',
      'GRANT SELECT ON TABLE "s"."t3" TO "a";',
      'GRANT SELECT ON TABLE "other"."t1" TO "a";',
      'GRANT INSERT, SELECT ON TABLE "s"."t4" TO "a";',
    ]);
  });

  it('never moves a grant across another kind of statement (default privileges, memberships)', () => {
    const between: Change = {
      kind: 'set_default_privilege',
      owner: 'o',
      scope: { type: 'schema', schema: 's' },
      on_type: 'table',
      grantee: 'a',
      privileges: ['SELECT'],
    };
    expect(sqlOf([grant('a', 's', 't1'), between, grant('a', 's', 't2')])).toEqual([
      'GRANT SELECT ON TABLE "s"."t1" TO "a";',
      'ALTER DEFAULT PRIVILEGES FOR ROLE "o" IN SCHEMA "s" GRANT SELECT ON TABLES TO "a";',
      'GRANT SELECT ON TABLE "s"."t2" TO "a";',
    ]);
  });

  it('records every change a grouped statement carries', () => {
    const out = renderSql(
      [{ kind: 'drop_owned', role: 'x' }, grant('a', 's', '*'), grant('b', 's', 't1'), grant('a', 's', 't9')],
      ctx([table('s', 't1'), table('s', 't2')]),
    );
    expect(out.statements.map((s) => [s.sql, s.changeIndices])).toEqual([
      ['DROP OWNED BY "x";', [0]],
      ['GRANT SELECT ON TABLE "s"."t1" TO "a", "b";', [1, 2]],
      ['GRANT SELECT ON TABLE "s"."t2", "s"."t9" TO "a";', [1, 3]],
    ]);
    expect(out.statements.map((s) => s.changeIndex)).toEqual([0, 1, 1]);
  });

  it(`bounds a statement to ${MAX_LIST_ITEMS} objects`, () => {
    const inventory = Array.from({ length: 2500 }, (_, i) => table('s', `t${i}`));
    const out = renderSql([grant('a', 's', '*')], ctx(inventory));
    expect(out.statementCount).toBe(3);
    const parsed = parseStatements(out.sql);
    expect(parsed.map((s) => (s['objects'] as unknown[]).length)).toEqual([1000, 1000, 500]);
    expect(new Set(parsed.flatMap((s) => (s['objects'] as string[][]).map((o) => o[1])))).toEqual(
      new Set(inventory.map((o) => o.name)),
    );
  });

  it(`bounds a statement's object list to ${MAX_LIST_BYTES} bytes`, () => {
    const long = (i: number) => `${'x'.repeat(58)}${String(i).padStart(5, '0')}`;
    const inventory = Array.from({ length: 1000 }, (_, i) => table('y'.repeat(63), long(i)));
    const out = renderSql([grant('a', 'y'.repeat(63), '*')], ctx(inventory));
    expect(out.statementCount).toBeGreaterThan(1);
    for (const statement of out.statements) {
      expect(Buffer.byteLength(statement.sql)).toBeLessThan(MAX_LIST_BYTES + 200);
    }
    expect(parseStatements(out.sql).flatMap((s) => s['objects'] as unknown[])).toHaveLength(1000);
  });
});

describe('grouping REVOKE statements', () => {
  it('merges neighbours that differ only in the object, keeping the order of everything else', () => {
    expect(
      sqlOf([revoke('a', 's', 't1'), revoke('a', 's', 't2'), revoke('b', 's', 't1'), revoke('a', 's', 't3')]),
    ).toEqual([
      'REVOKE INSERT ON TABLE "s"."t1", "s"."t2" FROM "a";',
      'REVOKE INSERT ON TABLE "s"."t1" FROM "b";',
      'REVOKE INSERT ON TABLE "s"."t3" FROM "a";',
    ]);
  });

  it("a grantor's revokes stay inside their SET ROLE block", () => {
    expect(
      sqlOf(
        [revoke('a', 's', '*', 'g'), revoke('a', 's', 't9', 'g'), revoke('a', 's', 't8')],
        ctx([table('s', 't1'), table('s', 't2')]),
      ),
    ).toEqual([
      'SET ROLE "g";',
      'REVOKE INSERT ON TABLE "s"."t1", "s"."t2" FROM "a";',
      'SET ROLE "admin";',
      'SET ROLE "g";',
      'REVOKE INSERT ON TABLE "s"."t9" FROM "a";',
      'SET ROLE "admin";',
      'REVOKE INSERT ON TABLE "s"."t8" FROM "a";',
    ]);
  });
});

// ---- property: grouped and per-object SQL do the same per-object operations ----

/** One parsed statement as the per-object operations it performs, in the order PostgreSQL applies them. */
function operations(statement: ParsedStatement): string[] {
  if (statement.kind !== 'GrantStmt') return [JSON.stringify(statement)];
  const { objects, grantees, ...rest } = statement as ParsedStatement & {
    objects: unknown[];
    grantees: unknown[];
  };
  return objects.flatMap((object) => grantees.map((grantee) => JSON.stringify({ ...rest, object, grantee })));
}

/** The operations of some SQL; runs of GRANTs (which commute and are idempotent) are compared as sets. */
function effects(sql: string): string[] {
  const out: string[] = [];
  let grants: string[] = [];
  const flush = () => {
    out.push(...[...new Set(grants)].sort());
    grants = [];
  };
  for (const statement of sql === '' ? [] : parseStatements(sql)) {
    const isGrant = statement.kind === 'GrantStmt' && statement['is_grant'] === true;
    if (!isGrant) flush();
    for (const op of operations(statement)) (isGrant ? grants : out).push(op);
  }
  flush();
  return out;
}

// Small pools, so that neighbours often share privileges, kind and schema (the cases grouping merges).
const NAMES = ['a', 'PUBLIC', '"PUBLIC"', 'x"y', "o'neil", 'a, b', ') TO x; --'];
const SCHEMAS = ['s', 'x"y, "s'];
const name = fc.constantFrom(...NAMES);
const schema = fc.constantFrom(...SCHEMAS);
const privileges = fc.constantFrom<Privilege[]>(['SELECT'], ['INSERT', 'SELECT']);

const aclChange: fc.Arbitrary<Change> = fc
  .record({
    revoke: fc.boolean(),
    role: name,
    schema,
    object: fc.oneof(
      fc.record({
        object_type: fc.constantFrom('table' as const, 'view' as const, 'type' as const),
        name: fc.constantFrom('*', 't1', 't2', 'x"y'),
      }),
      fc.record({
        object_type: fc.constantFrom('sequence' as const, 'function' as const),
        name: fc.constantFrom('*', 'f(integer)', 'g()'),
      }),
      fc.record({
        object_type: fc.constantFrom('schema' as const, 'database' as const),
        name: fc.constantFrom('s', 'db', 'x"y'),
      }),
    ),
    privileges,
    grantor: fc.constantFrom(null, null, null, 'g'),
  })
  .map(({ revoke: isRevoke, role, schema: s, object, privileges: p, grantor }): Change => {
    const target = {
      object_type: object.object_type,
      name: object.name,
      schema: object.object_type === 'schema' || object.object_type === 'database' ? null : s,
    };
    return isRevoke
      ? { kind: 'revoke', role, privileges: [...p], ...target, grantor }
      : { kind: 'grant', role, privileges: [...p], ...target };
  });

const otherChange: fc.Arbitrary<Change> = fc.oneof(
  name.filter((n) => n !== 'PUBLIC').map((role): Change => ({ kind: 'drop_owned', role })),
  name.map((grantee): Change => ({
    kind: 'set_default_privilege',
    owner: 'o',
    scope: { type: 'global' },
    on_type: 'table',
    grantee,
    privileges: ['SELECT'],
  })),
);

const inventoryArb = fc.uniqueArray(
  fc.record({
    kind: fc.constantFrom('table' as const, 'view' as const, 'type' as const),
    schema,
    name: fc.constantFrom('t1', 't2', 't3', 'v', 'x"y', 'é'),
    owner: fc.constant('o'),
  }),
  { selector: (o) => `${o.kind}/${o.schema}/${o.name}`, maxLength: 12 },
);

describe('grouped SQL does what the per-object SQL does', () => {
  it('the same GRANT operations per run, and every other operation in the same order', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof({ weight: 5, arbitrary: aclChange }, { weight: 1, arbitrary: otherChange }), {
          maxLength: 40,
        }),
        inventoryArb,
        (changes, inventory) => {
          const context = ctx(inventory);
          const perObject = renderSql(changes, context, { statements: 'per_object' });
          const grouped = renderSql(changes, context);
          expect(grouped.statementCount).toBeLessThanOrEqual(perObject.statementCount);
          if (grouped.sql !== '') expect(parseStatements(grouped.sql)).toHaveLength(grouped.statementCount);
          expect(effects(grouped.sql)).toEqual(effects(perObject.sql));
          // Every change with a statement is still carried by one.
          const carried = (r: typeof grouped) => new Set(r.statements.flatMap((s) => s.changeIndices));
          expect(carried(grouped)).toEqual(carried(perObject));
        },
      ),
      { numRuns: 300 },
    );
  });
});
