// What an execution request says about the planner's cache: the sequences it had applied of policies and
// plans, leaving out a kind it has not seen (stream sequences start at 1; the contract refuses 0).
import { seenBy } from './command-sink.js';

describe('seenBy', () => {
  it('carries the applied sequence of policies and plans, and leaves out a kind not seen yet', () => {
    const applied: Record<string, number> = { postgrespolicy: 17, postgrespolicyplan: 0, secret: 99 };
    expect(seenBy({ appliedSequence: (kind) => applied[kind] ?? 0 })).toEqual({ postgrespolicy: 17 });
    expect(seenBy({ appliedSequence: () => 0 })).toEqual({});
  });
});
