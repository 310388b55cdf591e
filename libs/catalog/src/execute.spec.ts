// clipStatement: how a long (grouped) statement is shown in an error message.
import { clipStatement } from './execute.js';

describe('clipStatement', () => {
  it('keeps a short statement whole', () => {
    expect(clipStatement('DROP ROLE "a"', 100)).toBe('DROP ROLE "a"');
  });

  it('cuts a long one and says how much was left out', () => {
    expect(clipStatement('x'.repeat(30), 10)).toBe(`${'x'.repeat(10)}... [20 more characters]`);
  });

  it('never cuts inside a surrogate pair', () => {
    const clipped = clipStatement(`${'a'.repeat(9)}\u{1F600}tail`, 10);
    expect(clipped).toBe(`${'a'.repeat(9)}... [6 more characters]`);
  });
});
