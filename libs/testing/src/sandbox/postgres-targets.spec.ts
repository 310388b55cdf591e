// PG_MAJORS selects the servers of the test matrix.
import { postgresTargets } from './postgres.js';

describe('PG_MAJORS', () => {
  it('defaults to the system server', () => {
    expect(postgresTargets({})).toEqual(['system']);
    expect(postgresTargets({ PG_MAJORS: ' ' })).toEqual(['system']);
  });

  it('lists system and embedded majors in the given order, once each', () => {
    expect(postgresTargets({ PG_MAJORS: 'system, 18,14,18' })).toEqual(['system', 18, 14]);
  });

  it('rejects a major without a pinned package, naming the allowed values', () => {
    expect(() => postgresTargets({ PG_MAJORS: '15,13' })).toThrow(
      'PG_MAJORS: "13" is neither "system" nor one of the majors 14, 15, 16, 17, 18',
    );
  });
});
