// Connection flags written before the command, as kubectl users do, reach the command.
import { hoistLeadingFlags } from './leading-flags.js';

describe('hoistLeadingFlags', () => {
  it.each([
    [
      ['-n', 'shop', 'plans'],
      ['plans', '-n', 'shop'],
    ],
    [
      ['--context=prod', '-A', 'access', 'list', '-o', 'json'],
      ['access', 'list', '-o', 'json', '--context=prod', '-A'],
    ],
    [
      ['--as', 'bob', 'approve', 'p1'],
      ['approve', 'p1', '--as', 'bob'],
    ],
    [
      ['plans', '-n', 'shop'],
      ['plans', '-n', 'shop'],
    ],
    [['--help'], ['--help']],
    [
      ['-n', 'shop'],
      ['-n', 'shop'],
    ],
    [
      ['-n', 'shop', '--help'],
      ['-n', 'shop', '--help'],
    ],
  ])('%j becomes %j', (input, output) => {
    expect(hoistLeadingFlags(input)).toEqual(output);
  });
});
