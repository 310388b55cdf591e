// Spec: PostgresPolicy `interval` (Duration `^([0-9]+[smh])+$`, default 5m) drives the periodic requeue.
import { DEFAULT_INTERVAL_SECONDS, parseInterval } from './interval.js';

describe('interval (spec Duration, default 5m)', () => {
  it.each([
    ['5m', 300],
    ['1h', 3600],
    ['1h30m', 5400],
    ['90s', 90],
    ['1h1m1s', 3661],
  ])('parses %s as %i seconds', (text, seconds) => {
    expect(parseInterval(text)).toEqual({ ok: true, seconds });
  });

  it('uses the 5m default when interval is omitted or empty', () => {
    expect(parseInterval(undefined)).toEqual({ ok: true, seconds: DEFAULT_INTERVAL_SECONDS });
    expect(parseInterval('')).toEqual({ ok: true, seconds: 300 });
  });

  it('treats a zero interval as the default instead of a hot loop', () => {
    expect(parseInterval('0s')).toEqual({ ok: true, seconds: 300 });
  });

  it.each(['5', '5d', 'm5', '-5m', '5 m'])('rejects %s with a message naming the value', (text) => {
    const parsed = parseInterval(text);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.message).toContain(JSON.stringify(text.trim()));
  });
});
