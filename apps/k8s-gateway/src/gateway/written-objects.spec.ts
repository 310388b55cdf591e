// The gateway's memory of its own last writes: taken once, bounded, and never an object without a version.
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
});
