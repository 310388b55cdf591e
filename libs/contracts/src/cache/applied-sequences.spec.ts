// The applied-sequence rule: a wait for "what the sender had seen" ends when every listed kind has applied
// as much, never earlier, and gives up (false) at its timeout or when the cache stops.
import { AppliedSequences } from './applied-sequences.js';

describe('AppliedSequences', () => {
  it('a sequence already applied is reached at once; an empty list is always reached', async () => {
    const applied = new AppliedSequences();
    applied.ready();
    applied.applied('postgrespolicyplan', 42);
    await expect(applied.reach({ postgrespolicyplan: 42 }, 1)).resolves.toBe(true);
    await expect(applied.reach({ postgrespolicyplan: 7 }, 1)).resolves.toBe(true);
    await expect(applied.reach({}, 1)).resolves.toBe(true);
  });

  it('waits until every listed kind has applied its sequence, not just one of them', async () => {
    const applied = new AppliedSequences();
    applied.ready();
    let reached: boolean | undefined;
    const waiting = applied.reach({ postgrespolicy: 10, postgrespolicyplan: 12 }, 5_000).then((r) => {
      reached = r;
    });
    applied.applied('postgrespolicyplan', 12);
    applied.applied('postgrespolicy', 9);
    await Promise.resolve();
    expect(reached).toBeUndefined();
    applied.applied('postgrespolicy', 11);
    await waiting;
    expect(reached).toBe(true);
  });

  it('sequences only grow: an older event applied after a re-follow does not lower what was reached', () => {
    const applied = new AppliedSequences();
    applied.applied('postgrespolicy', 30);
    applied.applied('postgrespolicy', 5);
    expect(applied.of('postgrespolicy')).toBe(30);
    expect(applied.of('secret')).toBe(0);
  });

  it('nothing is reached during the first delivery, which skips superseded messages; then it is', async () => {
    const applied = new AppliedSequences();
    applied.applied('postgrespolicyplan', 50);
    expect(applied.covers({ postgrespolicyplan: 40 })).toBe(false);
    const waiting = applied.reach({ postgrespolicyplan: 40 }, 5_000);
    applied.ready();
    await expect(waiting).resolves.toBe(true);
  });

  it('gives up with false after its timeout, and at once when stopped', async () => {
    const applied = new AppliedSequences();
    await expect(applied.reach({ postgrespolicyplan: 1 }, 20)).resolves.toBe(false);
    const pending = applied.reach({ postgrespolicyplan: 1 }, 60_000);
    applied.stop();
    await expect(pending).resolves.toBe(false);
    await expect(applied.reach({ postgrespolicyplan: 1 }, 60_000)).resolves.toBe(false);
  });
});
