// recorded.visual orders nodes by id and edges by (source, target, kind) in code-point order, whatever the
// names hold: astral characters (which UTF-16 order misplaces) and NUL take the part-by-part reference path.
import { compareCodePoints, type CatalogSnapshot, type DesiredState } from '@rolepolicy/policy';

import { roleState } from '../../policy/src/diff/test-support/builders.js';
import { realisticSnapshot } from './test-support/realistic.js';
import { buildVisual } from './visual.js';

const NO_DESIRE = {
  roles: [],
  default_privileges: [],
  default_privilege_absences: [],
} as unknown as DesiredState;

function graphOf(names: readonly string[]): ReturnType<typeof buildVisual> {
  const base = realisticSnapshot(160010);
  const snapshot: CatalogSnapshot = {
    ...base,
    roles: names.map((name) => ({ name, state: roleState({}) })),
    grants: [],
    default_privileges: [],
    memberships: names.flatMap((role, i) =>
      names
        .filter((_, j) => j !== i)
        .map((member) => ({ role, member, inherit: true, admin: false, grantor: null })),
    ),
    existing_roles: [...names],
  };
  return buildVisual(snapshot, snapshot, NO_DESIRE, { roles: [], schemas: [] });
}

function expectCodePointOrder(visual: ReturnType<typeof buildVisual>): void {
  const ids = visual.nodes.map((n) => n.id);
  expect(ids).toEqual([...ids].sort(compareCodePoints));
  const keys = visual.edges.map((e) => [e.source, e.target, e.kind] as const);
  const byParts = (a: readonly string[], b: readonly string[]): number =>
    compareCodePoints(a[0]!, b[0]!) || compareCodePoints(a[1]!, b[1]!) || compareCodePoints(a[2]!, b[2]!);
  expect(keys).toEqual([...keys].sort(byParts));
}

describe('visual graph order', () => {
  it('sorts plain names by code point', () => {
    expectCodePointOrder(graphOf(['reporting', 'app', 'app_owner', 'App', 'orders-editor']));
  });

  it('sorts astral and high-BMP names by code point, not by UTF-16 units', () => {
    const visual = graphOf(['\u{1F600}role', '\uFF5Arole', 'role']);
    expectCodePointOrder(visual);
    // UTF-16 order would put the astral character (a surrogate pair, 0xD83D...) before U+FF5A.
    expect(visual.nodes.map((n) => n.label)).toEqual(['role', '\uFF5Arole', '\u{1F600}role']);
  });

  it('sorts names holding NUL part by part', () => {
    expectCodePointOrder(graphOf(['a', 'a\u0000b', 'a\u0001', 'ab']));
  });
});
