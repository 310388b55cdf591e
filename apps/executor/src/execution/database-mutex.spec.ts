// The per-database mutex key: namespace and connection reference.
import { databaseKey } from './database-mutex.js';

describe('databaseKey', () => {
  it('keys by namespace and connection reference', () => {
    const a = databaseKey({ policy: { namespace: 'x' }, target: 'x/db/url' });
    expect(a).toBe(databaseKey({ policy: { namespace: 'x' }, target: 'x/db/url' }));
    expect(a).not.toBe(databaseKey({ policy: { namespace: 'y' }, target: 'x/db/url' }));
    expect(a).not.toBe(databaseKey({ policy: { namespace: 'x' }, target: 'x/other/url' }));
  });
});
