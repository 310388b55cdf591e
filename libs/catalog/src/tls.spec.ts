// The pure half of TLS by default (ADR 0019): which sslMode a connection means, what each mode does, and
// what a connection URL may carry. The wire behaviour is in tls.int-spec.ts against real servers.
import { DatabaseError } from './redaction.js';
import { PlainServerMemo, splitUrl, sslModeOf, tlsPlan } from './tls.js';

describe('sslModeOf', () => {
  it('reads an unset or empty sslMode as prefer, as libpq does', () => {
    expect(sslModeOf(undefined, 'connection.params.sslMode')).toBe('prefer');
    expect(sslModeOf(null, 'connection.params.sslMode')).toBe('prefer');
    expect(sslModeOf('', 'connection.params.sslMode')).toBe('prefer');
  });

  it('refuses an unknown mode, naming the field and the allowed values', () => {
    expect(() => sslModeOf('no-verify', 'connection URL sslmode')).toThrow(
      'connection URL sslmode must be one of disable, allow, prefer, require, verify-ca, verify-full',
    );
  });
});

describe('tlsPlan', () => {
  it('sends in plain text only for disable', () => {
    expect(tlsPlan('disable').kind).toBe('plain');
    for (const mode of ['allow', 'prefer', 'require', 'verify-ca', 'verify-full'] as const) {
      expect(tlsPlan(mode).kind).not.toBe('plain');
    }
  });

  it('tries TLS first for allow and prefer, and never falls back for require or the verifying modes', () => {
    expect(tlsPlan('allow').kind).toBe('prefer');
    expect(tlsPlan('prefer').kind).toBe('prefer');
    expect(tlsPlan('require').kind).toBe('tls');
    expect(tlsPlan('verify-ca').kind).toBe('tls');
    expect(tlsPlan('verify-full').kind).toBe('tls');
  });

  it('verifies the certificate only in the verifying modes, and the host name only in verify-full', () => {
    const ssl = (mode: Parameters<typeof tlsPlan>[0]) => {
      const plan = tlsPlan(mode, { ca: '-----BEGIN CERTIFICATE-----' });
      return plan.kind === 'plain' ? undefined : (plan.ssl as Record<string, unknown>);
    };
    expect(ssl('require')?.['rejectUnauthorized']).toBe(false);
    expect(ssl('verify-ca')?.['rejectUnauthorized']).toBe(true);
    expect(ssl('verify-ca')?.['checkServerIdentity']).toBeInstanceOf(Function);
    expect(ssl('verify-full')?.['rejectUnauthorized']).toBe(true);
    expect(ssl('verify-full')?.['checkServerIdentity']).toBeUndefined();
    expect(ssl('verify-full')?.['ca']).toContain('-----BEGIN CERTIFICATE-----');
  });
});

describe('splitUrl', () => {
  it.each([
    'sslrootcert',
    'sslcert',
    'sslkey',
    'sslpassword',
    'ssl',
    'SSLROOTCERT',
    'uselibpqcompat',
    'requiressl',
  ])(
    'refuses the URL parameter %s, which would name a file on the service disk or bypass sslmode',
    (name) => {
      const url = `postgres://u:pw@db.example:5432/app?${name}=/etc/passwd`;
      let error: unknown;
      try {
        splitUrl(url);
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(DatabaseError);
      expect((error as DatabaseError).message).toBe(
        `connection URL parameter ${name} is not supported: TLS is set by sslmode, trusted CAs by DATABASE_TLS_CA_FILE`,
      );
      expect((error as DatabaseError).message).not.toContain('/etc/passwd');
    },
  );

  it('takes the password and sslmode out of the settings, so the TLS rule decides when the password is sent', () => {
    const split = splitUrl('postgres://u:p%40ss@db.example:6432/app?sslmode=verify-full&application_name=x');
    expect(split.password).toBe('p@ss');
    expect(split.sslMode).toBe('verify-full');
    expect(split.config).toMatchObject({ host: 'db.example', port: 6432, database: 'app', user: 'u' });
    expect(JSON.stringify(split.config)).not.toContain('p@ss');
    expect(split.config).not.toHaveProperty('ssl');
  });

  it('takes a password given as a query parameter the same way', () => {
    const split = splitUrl('postgres://u@db.example/app?password=qpw');
    expect(split.password).toBe('qpw');
    expect(JSON.stringify(split.config)).not.toContain('qpw');
  });
});

describe('PlainServerMemo', () => {
  it('remembers a server without TLS for its time to live, per host:port', () => {
    let now = 1_000;
    const memo = new PlainServerMemo(60_000, () => now);
    memo.remember('db:5432');
    expect(memo.isPlain('db:5432')).toBe(true);
    expect(memo.isPlain('db:5433')).toBe(false);
    now += 59_999;
    expect(memo.isPlain('db:5432')).toBe(true);
    now += 1;
    expect(memo.isPlain('db:5432')).toBe(false);
  });

  it('forgets a server at once when told (a password was refused in clear)', () => {
    const memo = new PlainServerMemo(60_000, () => 0);
    memo.remember('db:5432');
    memo.forget('db:5432');
    expect(memo.isPlain('db:5432')).toBe(false);
  });
});
