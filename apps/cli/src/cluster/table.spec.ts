// The plugin prints what kubectl users expect: aligned columns, kubectl's ages, `-o name|json|yaml`,
// and durations as people write them.
import { parse } from 'yaml';

import {
  age,
  formatObjects,
  humanGranted,
  humanSeconds,
  relative,
  renderTable,
  shortDuration,
} from './table.js';

describe('renderTable', () => {
  it('aligns columns with three spaces and no trailing blanks, like kubectl', () => {
    const text = renderTable(
      ['NAME', 'PHASE', 'AGE'],
      [
        ['shop-3f2c1e9a0b4d', 'Pending', '5m'],
        ['a', 'Approved', '12s'],
      ],
    );
    expect(text).toBe(
      [
        'NAME                PHASE      AGE',
        'shop-3f2c1e9a0b4d   Pending    5m',
        'a                   Approved   12s',
        '',
      ].join('\n'),
    );
  });

  it('prints <none> for an empty cell and only headers for no rows', () => {
    expect(renderTable(['NAME', 'PLAN'], [['c1', '']])).toBe('NAME   PLAN\nc1     <none>\n');
    expect(renderTable(['NAME'], [])).toBe('NAME\n');
  });
});

describe('durations', () => {
  it.each([
    [45_000, '45s'],
    [192_000, '3m12s'],
    [5 * 3600_000, '5h'],
    [(2 * 24 + 5) * 3600_000, '2d5h'],
    [45 * 24 * 3600_000, '45d'],
    [-5000, '0s'],
  ])('shortDuration(%d) is %s', (ms, text) => {
    expect(shortDuration(ms)).toBe(text);
  });

  it('ages and relative times from a fixed now', () => {
    const now = new Date('2026-11-27T12:00:00Z');
    expect(age('2026-11-27T11:55:00Z', now)).toBe('5m');
    expect(age(undefined, now)).toBe('');
    expect(relative('2026-11-27T12:29:00Z', now)).toBe('in 29m');
    expect(relative('2026-11-27T11:57:00Z', now)).toBe('3m ago');
  });

  it('granted durations read as people write them', () => {
    expect(humanSeconds(5400)).toBe('1h30m');
    expect(humanSeconds(0)).toBe('0s');
    expect(humanGranted('1800s')).toBe('30m');
    expect(humanGranted('1h')).toBe('1h');
    expect(humanGranted(undefined)).toBe('');
  });
});

describe('formatObjects', () => {
  const objects = [{ metadata: { name: 'a' } }, { metadata: { name: 'b' } }];

  it('-o name prints resource/name lines', () => {
    expect(formatObjects(objects, 'name', 'postgrespolicyplan.rolepolicy.io', true)).toBe(
      'postgrespolicyplan.rolepolicy.io/a\npostgrespolicyplan.rolepolicy.io/b\n',
    );
  });

  it('a listing is a List, one written object is itself', () => {
    expect(JSON.parse(formatObjects(objects, 'json', 'x', true))).toEqual({
      apiVersion: 'v1',
      kind: 'List',
      items: objects,
    });
    expect(parse(formatObjects([objects[0]!], 'yaml', 'x', false))).toEqual(objects[0]);
    expect(JSON.parse(formatObjects([], 'json', 'x', true)).items).toEqual([]);
  });
});
