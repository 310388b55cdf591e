// --timeout reads as kubectl's durations do; a bad one is a usage error naming the flag.
import { CliError } from '../io.js';
import { timeoutMs } from './context.js';

describe('timeoutMs', () => {
  it.each([
    [undefined, 300_000],
    ['90s', 90_000],
    ['5m', 300_000],
    ['1h', 3_600_000],
    ['1h30m', 5_400_000],
  ])('%s is %d ms', (text, ms) => {
    expect(timeoutMs(text)).toBe(ms);
  });

  it.each(['0s', '5', '-1m', 'soon'])('%s is refused with exit 2, naming --timeout', (text) => {
    const error = (() => {
      try {
        timeoutMs(text);
      } catch (caught) {
        return caught;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(CliError);
    expect((error as CliError).exitCode).toBe(2);
    expect((error as CliError).message).toMatch(/^--timeout: must (match|be greater than zero)/);
  });
});
