// The Failed result of a statement that failed: bounded to the execute result's limits whatever its length.
import { ExecutionError } from '@rolepolicy/catalog';
import type { ExecuteRequestV2 } from '@rolepolicy/contracts';
import { executionFailed } from './outcomes.js';

describe('executionFailed', () => {
  const request = { changeDigest: 'sha256:abc' } as ExecuteRequestV2;

  it('clips a long grouped statement and its message to the result schema bound (4,096)', () => {
    const statement = `GRANT SELECT ON TABLE ${Array.from({ length: 1000 }, (_, i) => `"s"."t${i}"`).join(', ')} TO "r"`;
    const error = new ExecutionError(
      `statement 3 of 9 failed (SQLSTATE 42P01): ${statement}`,
      3,
      statement,
      '42P01',
    );
    const facts = executionFailed(request, error, 1);
    expect(facts.lastError?.statement?.length).toBeLessThanOrEqual(4096);
    expect(facts.lastError?.message.length).toBeLessThanOrEqual(4096);
    expect(facts.lastError?.statement).toMatch(
      /^GRANT SELECT ON TABLE "s"."t0", .*\.\.\. \[\d+ more characters\]$/,
    );
    expect(facts.lastError).toMatchObject({ statementIndex: 2, sqlState: '42P01' });
  });

  it('keeps a short statement whole', () => {
    const error = new ExecutionError('failed', 0, 'DROP ROLE "x"', '42704');
    expect(executionFailed(request, error, 0).lastError?.statement).toBe('DROP ROLE "x"');
  });
});
