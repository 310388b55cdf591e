// `password_valid_until` parsing and normalisation to the form inspection reads back (UTC, whole seconds, Z),
// so a manifest value such as `2025-12-31T05:00:00.123+05:00` compares equal to the live one and never flaps.

const ISO_8601 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(Z|[+-]\d{2}:\d{2})$/;

const MIN_MS = Date.UTC(1970, 0, 1);
const MAX_MS = Date.UTC(9999, 11, 31, 23, 59, 59);

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/**
 * Rounds a fraction to microseconds the way PostgreSQL does (round half to even) and says whether that
 * carried into the next second; PostgreSQL then drops the microseconds when reading the value back.
 */
function fractionCarries(digits: string): boolean {
  if (digits.length <= 6) return false;
  const micros = digits.slice(0, 6);
  const rest = digits.slice(6);
  const half =
    rest[0]! > '5' || (rest[0] === '5' && (/[1-9]/.test(rest.slice(1)) || Number(micros[5]) % 2 === 1));
  return half && micros === '999999';
}

/**
 * Parses an ISO 8601 timestamp with `Z` or `±HH:MM` (optional fraction, year >= 1970) and returns it as UTC
 * whole seconds with `Z`; undefined when the value is not such a timestamp.
 * @example normaliseValidUntil('2025-12-31T05:00:00.123+05:00') === '2025-12-31T00:00:00Z'
 */
export function normaliseValidUntil(value: string): string | undefined {
  const match = ISO_8601.exec(value);
  if (match === null) return undefined;
  const [, y, mo, d, h, mi, s, fraction, zone] = match;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  if (year < 1970 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  let offsetMinutes = 0;
  if (zone !== 'Z') {
    const sign = zone![0] === '-' ? -1 : 1;
    const oh = Number(zone!.slice(1, 3));
    const om = Number(zone!.slice(4, 6));
    if (oh > 23 || om > 59) return undefined;
    offsetMinutes = sign * (oh * 60 + om);
  }
  const carry = fraction !== undefined && fractionCarries(fraction) ? 1000 : 0;
  const ms = Date.UTC(year, month - 1, day, hour, minute, second) - offsetMinutes * 60_000 + carry;
  if (ms < MIN_MS || ms > MAX_MS) return undefined;
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
