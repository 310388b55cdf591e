// The gateway's memory of its own last writes: taken once, bounded, never an object without a version, and
// let go once the informers hold that write (or anything after it), so a write by someone else since is not
// written over a stale resourceVersion.
import { WrittenObjects } from './written-objects.js';

const object = (name: string, resourceVersion?: string) => ({
  apiVersion: 'rolepolicy.io/v1alpha1',
  kind: 'PostgresPolicy',
  metadata: { name, namespace: 'team-a', ...(resourceVersion === undefined ? {} : { resourceVersion }) },
});

describe('written objects', () => {
  it('gives the last write once: a write based on it remembers its own answer or nothing', () => {
    const written = new WrittenObjects(10);
    written.remember('a', object('a', '1'));
    written.remember('a', object('a', '2'));
    expect(written.take('a')?.metadata?.resourceVersion).toBe('2');
    expect(written.take('a')).toBeUndefined();
  });

  it('keeps the newest up to its capacity, and nothing without a resourceVersion', () => {
    const written = new WrittenObjects(2);
    for (const name of ['a', 'b', 'c']) written.remember(name, object(name, '1'));
    expect(written.size).toBe(2);
    expect(written.take('a')).toBeUndefined();
    written.remember('d', object('d'));
    expect(written.take('d')).toBeUndefined();
    written.forget('b');
    expect(written.take('b')).toBeUndefined();
    expect(written.take('c')?.metadata?.name).toBe('c');
  });

  it('lets a write go once the informers deliver it: a later write by anyone starts from their copy', () => {
    const written = new WrittenObjects(10);
    written.remember('a', object('a', '5'));
    written.observed('b', '5');
    expect(written.size).toBe(1);
    // The informers' copy is now this very write: the next write starts from it, and from whatever follows.
    written.observed('a', '5');
    expect(written.take('a')).toBeUndefined();
  });

  it('keeps a write while the informers deliver only what came before it', () => {
    const written = new WrittenObjects(10);
    written.remember('a', object('a', '5'));
    // Older than the write (the watch delivers one object's changes in order): the informers' copy is stale.
    written.observed('a', '4');
    written.observed('a', '3');
    expect(written.take('a')?.metadata?.resourceVersion).toBe('5');
  });

  it('lets a write go when the informers see the object deleted', () => {
    const written = new WrittenObjects(10);
    written.remember('a', object('a', '5'));
    written.observed('a', undefined);
    expect(written.take('a')).toBeUndefined();
  });
});
