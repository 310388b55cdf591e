// resolveConnection: secretRef URLs, params parts as literals or Secret refs, target strings and failures.
import { paramsTarget, resolveConnection } from './resolve-connection.js';
import type { SecretLike, SecretLookup } from './secret-data.js';

const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');
const URL_VALUE = 'postgres://app:s3cr3t-pw@db.example:5433/appdb';

function lookup(secrets: Record<string, SecretLike>): SecretLookup {
  return (name) => secrets[name];
}

const dbSecret: SecretLike = {
  metadata: { name: 'db', resourceVersion: '41' },
  data: { DATABASE_URL: b64(URL_VALUE), OTHER: b64('postgresql://h/d'), BAD: b64('mysql://x:pw@h/d') },
};

describe('resolveConnection with secretRef', () => {
  it('reads DATABASE_URL by default and names namespace/secret/key as target', () => {
    const r = resolveConnection('team', { secretRef: { name: 'db' } }, lookup({ db: dbSecret }));
    expect(r).toEqual({
      ok: true,
      connection: {
        url: URL_VALUE,
        setRole: null,
        secretSources: [{ part: 'url', secret: 'db', key: 'DATABASE_URL' }],
      },
      target: 'team/db/DATABASE_URL',
      secretVersions: { db: '41' },
    });
  });

  it('honours secretKey', () => {
    const r = resolveConnection(
      'team',
      { secretRef: { name: 'db' }, secretKey: 'OTHER' },
      lookup({ db: dbSecret }),
    );
    expect(r.ok && r.target).toBe('team/db/OTHER');
    expect(r.ok && r.connection).toEqual({
      url: 'postgresql://h/d',
      setRole: null,
      secretSources: [{ part: 'url', secret: 'db', key: 'OTHER' }],
    });
  });

  it('accepts stringData (manifests) and prefers it over data', () => {
    const secret: SecretLike = {
      metadata: { resourceVersion: '2' },
      stringData: { DATABASE_URL: 'postgres://x/y' },
      data: { DATABASE_URL: b64('postgres://old/z') },
    };
    const r = resolveConnection('ns', { secretRef: { name: 's' } }, lookup({ s: secret }));
    expect(r.ok && r.connection).toMatchObject({ url: 'postgres://x/y', setRole: null });
  });

  it('reports a missing Secret by name', () => {
    const r = resolveConnection('team', { secretRef: { name: 'nope' } }, lookup({}));
    expect(r).toEqual({ ok: false, reason: 'SecretMissing', message: 'Secret team/nope not found' });
  });

  it('reports a missing key by Secret and key name', () => {
    const r = resolveConnection(
      'team',
      { secretRef: { name: 'db' }, secretKey: 'URL' },
      lookup({ db: dbSecret }),
    );
    expect(r).toEqual({ ok: false, reason: 'SecretKeyMissing', message: 'Secret team/db has no key URL' });
  });

  it('reports an empty connection URL by Secret and key name', () => {
    const r = resolveConnection(
      'team',
      { secretRef: { name: 'db' } },
      lookup({ db: { metadata: { resourceVersion: '1' }, data: { DATABASE_URL: '' } } }),
    );
    expect(r).toEqual({
      ok: false,
      reason: 'SecretValueEmpty',
      message: 'Secret team/db key DATABASE_URL is empty',
    });
  });

  it('rejects a value that is not a postgres URL without echoing it', () => {
    const r = resolveConnection(
      'team',
      { secretRef: { name: 'db' }, secretKey: 'BAD' },
      lookup({ db: dbSecret }),
    );
    expect(r.ok).toBe(false);
    expect(!r.ok && r.reason).toBe('InvalidConnection');
    expect(JSON.stringify(r)).not.toContain('mysql');
    expect(JSON.stringify(r)).not.toContain('pw');
  });

  it('rejects an absent or empty connection and secretRef together with params', () => {
    expect(resolveConnection('n', null, lookup({}))).toMatchObject({
      ok: false,
      reason: 'InvalidConnection',
    });
    expect(resolveConnection('n', {}, lookup({}))).toMatchObject({ ok: false, reason: 'InvalidConnection' });
    expect(
      resolveConnection(
        'n',
        { secretRef: { name: 'db' }, params: { host: 'h', dbname: 'd' } },
        lookup({ db: dbSecret }),
      ),
    ).toMatchObject({ ok: false, reason: 'InvalidConnection' });
  });
});

const creds: SecretLike = {
  metadata: { name: 'creds', resourceVersion: '7' },
  data: {
    user: b64('app'),
    pass: b64('hunter2-very-secret'),
    port: b64('6543'),
    host: b64('db.internal'),
    badport: b64('70000'),
  },
};

describe('resolveConnection with params', () => {
  it('mixes literals and Secret references, defaults port to 5432', () => {
    const r = resolveConnection(
      'team',
      {
        params: {
          host: 'db.example',
          dbname: 'app',
          usernameSecret: { name: 'creds', key: 'user' },
          passwordSecret: { name: 'creds', key: 'pass' },
          sslMode: 'require',
          setRole: 'admin_group',
        },
      },
      lookup({ creds }),
    );
    expect(r).toEqual({
      ok: true,
      connection: {
        params: {
          host: 'db.example',
          port: 5432,
          dbname: 'app',
          username: 'app',
          password: 'hunter2-very-secret',
          sslMode: 'require',
        },
        setRole: 'admin_group',
        secretSources: [
          { part: 'username', secret: 'creds', key: 'user' },
          { part: 'password', secret: 'creds', key: 'pass' },
        ],
      },
      target:
        'team/params:host=db.example;port=5432;dbname=app;username=secret:creds/user;password=secret:creds/pass;sslMode=require;setRole=admin_group',
      secretVersions: { creds: '7' },
    });
  });

  it('reads port and host from Secrets and names them in the target', () => {
    const r = resolveConnection(
      'team',
      {
        params: {
          hostSecret: { name: 'creds', key: 'host' },
          portSecret: { name: 'creds', key: 'port' },
          dbname: 'd',
        },
      },
      lookup({ creds }),
    );
    expect(r.ok && r.connection).toEqual({
      params: { host: 'db.internal', port: 6543, dbname: 'd', username: null, password: null, sslMode: null },
      setRole: null,
      // Which parts came from a Secret: their values are redacted from every message (ADR 0018).
      secretSources: [
        { part: 'host', secret: 'creds', key: 'host' },
        { part: 'port', secret: 'creds', key: 'port' },
      ],
    });
    expect(r.ok && r.target).toBe('team/params:host=secret:creds/host;port=secret:creds/port;dbname=d');
  });

  it('names a literal password only as present, never its value', () => {
    const r = resolveConnection(
      'team',
      { params: { host: 'h', port: 5000, dbname: 'd', username: 'u', password: 'literal-pw-123' } },
      lookup({}),
    );
    expect(r.ok && r.target).toBe('team/params:host=h;port=5000;dbname=d;username=u;password=literal');
    expect(r.ok && r.target).not.toContain('literal-pw-123');
    expect(r.ok && r.connection).toMatchObject({ params: { password: 'literal-pw-123', port: 5000 } });
    // Literal parts are the writer's own text: nothing to redact for them.
    expect(r.ok && 'secretSources' in r.connection).toBe(false);
  });

  it('encodes literal separators so targets stay unambiguous', () => {
    expect(paramsTarget('n', { host: 'a;b=c', dbname: 'd/e' })).toBe(
      'n/params:host=a%3Bb%3Dc;port=5432;dbname=d%2Fe',
    );
  });

  it('changes the target when a part changes (so the digest moves)', () => {
    const a = paramsTarget('n', { host: 'h', dbname: 'd' });
    expect(paramsTarget('n', { host: 'h', dbname: 'd2' })).not.toBe(a);
    expect(paramsTarget('m', { host: 'h', dbname: 'd' })).not.toBe(a);
    expect(paramsTarget('n', { host: 'h', dbname: 'd', port: 5432 })).toBe(a);
  });

  it('fails on a missing Secret or key of a part', () => {
    expect(
      resolveConnection(
        'team',
        { params: { host: 'h', dbname: 'd', passwordSecret: { name: 'gone', key: 'p' } } },
        lookup({}),
      ),
    ).toEqual({
      ok: false,
      reason: 'SecretMissing',
      message: 'Secret team/gone not found',
    });
    expect(
      resolveConnection(
        'team',
        { params: { host: 'h', dbname: 'd', passwordSecret: { name: 'creds', key: 'pw' } } },
        lookup({ creds }),
      ),
    ).toEqual({
      ok: false,
      reason: 'SecretKeyMissing',
      message: 'Secret team/creds has no key pw',
    });
  });

  it('requires host and dbname, a valid port, and no part given twice', () => {
    expect(resolveConnection('n', { params: { dbname: 'd' } }, lookup({}))).toMatchObject({
      reason: 'InvalidConnection',
      message: expect.stringContaining('host'),
    });
    expect(resolveConnection('n', { params: { host: 'h' } }, lookup({}))).toMatchObject({
      reason: 'InvalidConnection',
      message: expect.stringContaining('dbname'),
    });
    const badPort = resolveConnection(
      'n',
      { params: { host: 'h', dbname: 'd', portSecret: { name: 'creds', key: 'badport' } } },
      lookup({ creds }),
    );
    expect(badPort).toMatchObject({
      reason: 'InvalidConnection',
      message: 'Secret n/creds key badport is not a port number (1..65535)',
    });
    expect(
      resolveConnection(
        'n',
        { params: { host: 'h', hostSecret: { name: 'creds', key: 'host' }, dbname: 'd' } },
        lookup({ creds }),
      ),
    ).toMatchObject({ reason: 'InvalidConnection' });
  });

  it('rejects port 0 and an unknown sslMode, naming where they came from', () => {
    expect(resolveConnection('n', { params: { host: 'h', dbname: 'd', port: 0 } }, lookup({}))).toMatchObject(
      {
        reason: 'InvalidConnection',
        message: 'connection.params.port is not a port number (1..65535)',
      },
    );
    expect(
      resolveConnection('n', { params: { host: 'h', dbname: 'd', sslMode: 'sometimes' } }, lookup({})),
    ).toMatchObject({
      reason: 'InvalidConnection',
      message: expect.stringContaining('connection.params.sslMode must be one of disable'),
    });
  });

  it('passes cloud workload identity through to the catalog and names it in the target', () => {
    const auth = {
      type: 'cloud_workload_identity' as const,
      impersonateServiceAccount: 'db@p.iam.gserviceaccount.com',
      scope: 'https://www.googleapis.com/auth/sqlservice.login',
    };
    const r = resolveConnection(
      'n',
      { params: { host: 'h', dbname: 'd', username: 'app', auth } },
      lookup({}),
    );
    expect(r).toMatchObject({ ok: true, connection: { params: { password: null, username: 'app', auth } } });
    expect(r.ok && r.target).toBe(
      'n/params:host=h;port=5432;dbname=d;username=app;auth=cloud_workload_identity;' +
        'impersonateServiceAccount=db%40p.iam.gserviceaccount.com;' +
        'scope=https%3A%2F%2Fwww.googleapis.com%2Fauth%2Fsqlservice.login',
    );
  });

  it('refuses cloud workload identity next to a password', () => {
    const r = resolveConnection(
      'n',
      {
        params: {
          host: 'h',
          dbname: 'd',
          passwordSecret: { name: 'creds', key: 'pass' },
          auth: { type: 'cloud_workload_identity' },
        },
      },
      lookup({ creds }),
    );
    expect(r).toMatchObject({
      ok: false,
      reason: 'InvalidConnection',
      message: 'connection.params.auth and password/passwordSecret are mutually exclusive',
    });
  });

  it('never puts a Secret value into a failure message', () => {
    const r = resolveConnection(
      'n',
      {
        params: {
          hostSecret: { name: 'creds', key: 'pass' },
          dbname: 'd',
          portSecret: { name: 'creds', key: 'pass' },
        },
      },
      lookup({ creds }),
    );
    expect(r.ok).toBe(false);
    expect(JSON.stringify(r)).not.toContain('hunter2');
  });
});
