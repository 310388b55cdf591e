// Executions and inspections are bounded per server: databases of one server share a key, other servers and ports do not.
import { serverKey } from './server-key.js';

describe('serverKey', () => {
  it('is the host and port of a URL, whatever the database, user or password', () => {
    expect(serverKey({ url: 'postgres://app:secret@DB.example:6432/one' })).toBe('db.example:6432');
    expect(serverKey({ url: 'postgresql://other@db.example:6432/two?sslmode=require' })).toBe(
      'db.example:6432',
    );
    expect(serverKey({ url: 'postgres://db.example/three' })).toBe('db.example:5432');
  });

  it('tells servers apart by host and by port', () => {
    expect(serverKey({ url: 'postgres://a.example:5432/x' })).not.toBe(
      serverKey({ url: 'postgres://b.example:5432/x' }),
    );
    expect(serverKey({ url: 'postgres://127.0.0.1:5432/x' })).not.toBe(
      serverKey({ url: 'postgres://127.0.0.1:5433/x' }),
    );
  });

  it('reads params the same way as a URL', () => {
    expect(serverKey({ params: { host: 'DB.example', dbname: 'one' } })).toBe('db.example:5432');
    expect(serverKey({ params: { host: 'db.example', port: 6432, dbname: 'two' } })).toBe(
      serverKey({ url: 'postgres://db.example:6432/three' }),
    );
  });

  it('never carries a credential', () => {
    expect(serverKey({ url: 'postgres://app:s3cr3t@db.example/one' })).not.toContain('s3cr3t');
    expect(serverKey({ url: 'not a url s3cr3t' })).toBe('invalid-url');
  });
});
