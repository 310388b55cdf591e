// Config list GUCs and password_valid_until: the desired values must equal what PostgreSQL stores and what
// inspection reads back, or the plan flaps forever (docs/catalog.md).

import fc from 'fast-check';
import { renderGucValue, splitGucList as rendererSplit } from '../sql/guc.js';
import { canonicalConfigValue, splitGucList } from './guc.js';
import { normaliseValidUntil } from './timestamp.js';

describe('list GUC canonicalisation (search_path, temp_tablespaces, *_preload_libraries)', () => {
  it('re-quotes non-simple elements and joins with ", " as rolconfig stores them', () => {
    expect(canonicalConfigValue('search_path', 'a,\'b\' ,  "My Schema",$user')).toBe(
      'a, "\'b\'", "My Schema", "$user"',
    );
    expect(canonicalConfigValue('search_path', '"a, b"')).toBe('"a, b"');
    expect(canonicalConfigValue('search_path', 'Upper')).toBe('"Upper"');
    expect(canonicalConfigValue('search_path', '"with ""quote"""')).toBe('"with ""quote"""');
    expect(canonicalConfigValue('temp_tablespaces', '')).toBe('');
  });

  it('leaves other GUC values as opaque strings (30s is not 30000)', () => {
    expect(canonicalConfigValue('statement_timeout', '30s')).toBe('30s');
    expect(canonicalConfigValue('application_name', 'a, B')).toBe('a, B');
  });

  it('rejects unclosed quotes, text after a closing quote and empty items', () => {
    expect(splitGucList('"a')).toBeUndefined();
    expect(splitGucList('"a"b')).toBeUndefined();
    expect(splitGucList('a,,b')).toBeUndefined();
    expect(splitGucList('a,')).toBeUndefined();
    expect(splitGucList('""')).toBeUndefined();
  });

  it('the SQL renderer splits the canonical value back into the same elements (one literal per element)', () => {
    const element = fc
      .string({ minLength: 1, maxLength: 8 })
      .filter((s) => s.trim() === s && s.trim() !== '' && !s.includes('\u0000'));
    fc.assert(
      fc.property(fc.array(element, { minLength: 1, maxLength: 4 }), (elements) => {
        const quoted = elements.map((e) => `"${e.replaceAll('"', '""')}"`).join(', ');
        const canonical = canonicalConfigValue('search_path', quoted)!;
        expect(splitGucList(canonical)).toEqual(elements);
        expect(rendererSplit(canonical)).toEqual(elements);
        expect(canonicalConfigValue('search_path', canonical)).toBe(canonical);
      }),
    );
    expect(renderGucValue('search_path', canonicalConfigValue('search_path', 'a, My Schema')!)).toBe(
      "'a', 'My Schema'",
    );
  });
});

describe('password_valid_until normalisation', () => {
  it('normalises offsets and fractions to UTC whole seconds with Z, as inspection reads it back', () => {
    expect(normaliseValidUntil('2025-12-31T05:00:00.123+05:00')).toBe('2025-12-31T00:00:00Z');
    expect(normaliseValidUntil('2026-03-01T00:30:00+01:00')).toBe('2026-02-28T23:30:00Z');
    expect(normaliseValidUntil('2024-02-29T12:00:00Z')).toBe('2024-02-29T12:00:00Z');
  });

  it('rounds beyond microseconds like PostgreSQL (half to even) before dropping the fraction', () => {
    expect(normaliseValidUntil('2025-01-01T00:00:00.9999995Z')).toBe('2025-01-01T00:00:01Z');
    expect(normaliseValidUntil('2025-01-01T00:00:00.9999994Z')).toBe('2025-01-01T00:00:00Z');
    expect(normaliseValidUntil('2025-01-01T00:00:00.99999950Z')).toBe('2025-01-01T00:00:01Z');
  });

  it('rejects impossible dates, missing zones, years before 1970 and instants before the epoch', () => {
    for (const bad of [
      '2023-02-29T00:00:00Z',
      '2025-13-01T00:00:00Z',
      '2025-01-01T00:00:60Z',
      '2025-01-01T00:00:00',
      '1970-01-01T00:30:00+01:00',
      '0999-01-01T00:00:00Z',
    ]) {
      expect(normaliseValidUntil(bad)).toBeUndefined();
    }
  });

  it('is idempotent: a normalised value normalises to itself', () => {
    const instant = fc.date({
      min: new Date('1970-01-01T00:00:00Z'),
      max: new Date('9999-12-31T23:59:59Z'),
      noInvalidDate: true,
    });
    fc.assert(
      fc.property(instant, (date) => {
        const once = normaliseValidUntil(date.toISOString());
        expect(once).toBeDefined();
        expect(normaliseValidUntil(once!)).toBe(once);
      }),
    );
  });
});
