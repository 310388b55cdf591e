// The emulator's Table cells read additionalPrinterColumns the way the API server's CRD table convertor
// does: the first JSONPath match only, typed columns empty on a value of another type, filters on conditions.
import { toTable } from './table.js';
import type { KubeObject, PrinterColumn, ResourceType } from './types.js';

const NOW = Date.parse('2026-01-01T01:00:00Z');

function cells(columns: readonly PrinterColumn[], object: Record<string, unknown>): unknown[] {
  const type = { printerColumns: columns } as unknown as ResourceType;
  const kube = { metadata: { name: 'x' }, ...object } as unknown as KubeObject;
  const table = toTable(type, [kube], '1', null, NOW) as { rows: { cells: unknown[] }[] };
  return table.rows[0]!.cells.slice(1);
}

const column = (type: PrinterColumn['type'], jsonPath: string): PrinterColumn => ({
  name: 'C',
  type,
  jsonPath,
});

test('a condition filter reads that condition only; a missing condition is a null cell', () => {
  const status = {
    conditions: [
      { type: 'Accepted', status: 'True' },
      { type: 'Suspended', status: 'False' },
    ],
  };
  expect(
    cells(
      [
        column('string', '.status.conditions[?(@.type=="Accepted")].status'),
        column('string', '.status.conditions[?(@.type=="Ready")].status'),
      ],
      { status },
    ),
  ).toEqual(['True', null]);
});

test('only the first match is printed, as the API server does', () => {
  expect(
    cells([column('string', '.status.conditions[*].type')], {
      status: { conditions: [{ type: 'A' }, { type: 'B' }] },
    }),
  ).toEqual(['A']);
});

test('typed columns print values of their type and nothing for another type or null', () => {
  const spec = { n: 3, s: '3', b: false, t: '2026-01-01T00:00:00Z', o: { a: 1 }, z: null };
  expect(
    cells(
      [
        column('integer', '.spec.n'),
        column('integer', '.spec.s'),
        column('boolean', '.spec.b'),
        column('date', '.spec.t'),
        column('date', '.spec.n'),
        column('string', '.spec.o'),
        column('string', '.spec.b'),
        column('string', '.spec.z'),
      ],
      { spec },
    ),
  ).toEqual([3, null, false, '60m', null, '{"a":1}', 'false', null]);
});
