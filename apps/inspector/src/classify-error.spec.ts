// Inspection failures are sorted into transient (retry) and permanent, and their messages lose every secret.
import { connectionSecrets, DatabaseError, DatabaseTargetError } from '@rolepolicy/catalog';
import { classifyError, isTransientCode } from './classify-error.js';

describe('inspection errors are classified', () => {
  it('a database grant naming another database is permanent, with the InvalidDatabaseTarget code', () => {
    const error = new DatabaseTargetError('database grant target "x" does not match connected database "y"');
    expect(classifyError(error, [])).toEqual({
      class: 'permanent',
      code: 'InvalidDatabaseTarget',
      message: 'database grant target "x" does not match connected database "y"',
    });
  });

  it.each([
    ['ECONNREFUSED'],
    ['ETIMEDOUT'],
    ['ECONNRESET'],
    ['08006'],
    ['08001'],
    ['57P01'],
    ['57P03'],
    ['53300'],
    ['53100'],
    ['57014'],
    ['55P03'],
  ])('%s is transient', (code) => {
    expect(isTransientCode(code)).toBe(true);
  });

  it.each([['28P01'], ['28000'], ['3D000'], ['42501'], ['42883'], ['57000'], [null]])(
    '%s is permanent',
    (code) => {
      expect(isTransientCode(code)).toBe(false);
    },
  );

  it('a connect timeout without a code is transient', () => {
    expect(classifyError(new Error('timeout exceeded when trying to connect'), []).class).toBe('transient');
  });

  it('the message is redacted of the password and of URL userinfo', () => {
    const error = new DatabaseError(
      'could not use postgres://app:Hunter2-x@db:5432/orders with Hunter2-x',
      '28P01',
    );
    const classified = classifyError(error, ['Hunter2-x']);
    expect(classified).toEqual({ class: 'permanent', code: '28P01', message: expect.any(String) });
    expect(classified.message).not.toContain('Hunter2-x');
  });

  it('connection parts read from a Secret are replaced by their Secret and key (ADR 0018)', () => {
    const secrets = connectionSecrets({
      params: { host: 'pg.victim.internal', port: 6432, dbname: 'payroll', username: 'hr_admin' },
      secretSources: [
        { part: 'host', secret: 'victim', key: 'host' },
        { part: 'dbname', secret: 'victim', key: 'db' },
        { part: 'username', secret: 'victim', key: 'user' },
      ],
    });
    const cases: [Error, string][] = [
      [
        Object.assign(new Error('getaddrinfo ENOTFOUND pg.victim.internal'), { code: 'ENOTFOUND' }),
        'getaddrinfo ENOTFOUND [Secret "victim" key "host"]',
      ],
      [
        new DatabaseError('role "hr_admin" does not exist', '28000'),
        'role "[Secret "victim" key "user"]" does not exist',
      ],
      [
        new DatabaseTargetError('database grant target "x" does not match connected database "payroll"'),
        'database grant target "x" does not match connected database "[Secret "victim" key "db"]"',
      ],
    ];
    for (const [error, message] of cases) expect(classifyError(error, secrets).message).toBe(message);
  });

  it('redacts before the message is cut to length, so no prefix of a value survives the cut', () => {
    const value = 'pg-cut-at-the-limit.victim.internal';
    const secrets = connectionSecrets({
      params: { host: value, dbname: 'd' },
      secretSources: [{ part: 'host', secret: 'victim', key: 'host' }],
    });
    const message = classifyError(new Error(`${'x'.repeat(4090)}${value}`), secrets).message;
    expect(message).toHaveLength(4096);
    expect(message).not.toContain(value.slice(0, 6));
  });
});
