// Spec "Limits" and shared value types: collection sizes, name lengths in characters and UTF-8 bytes,
// privilege counts and enums. Every test asserts the path and the message an operator would see.

import { validateContent } from './validate.js';
import { MESSAGES } from './messages.js';

function errors(content: unknown): readonly { path: string; message: string }[] {
  const result = validateContent(content);
  return result.ok ? [] : result.errors;
}

const role = (name: string) => ({ name });
const grant = (i: number) => ({
  role: 'app',
  object: { type: 'table', schema: 's', name: `t${i}` },
  privileges: ['SELECT'],
});

describe('collection bounds (spec Limits)', () => {
  it.each([
    ['roles', 1024, (i: number) => role(`r${i}`)],
    ['grants', 4096, grant],
    ['memberships', 2048, (i: number) => ({ role: 'app', members: [{ name: `m${i}` }] })],
    ['default_privileges', 512, () => ({ owner: 'o', schema: 's', grant: [] })],
    ['retirements', 512, (i: number) => ({ role: `old${i}` })],
    ['schemas', 1024, (i: number) => ({ name: `s${i}` })],
  ] as const)('%s accepts at most %i items', (field, max, make) => {
    const over = Array.from({ length: max + 1 }, (_, i) => make(i));
    expect(errors({ roles: [role('app')], [field]: over })).toContainEqual({
      path: `spec.${field}`,
      message: MESSAGES.tooManyItems(max),
    });
    const at = Array.from({ length: max }, (_, i) => make(i));
    expect(errors({ roles: [role('app')], [field]: at })).not.toContainEqual(
      expect.objectContaining({ path: `spec.${field}` }),
    );
  });

  it('profiles accepts at most 128 entries', () => {
    const profiles = Object.fromEntries(Array.from({ length: 129 }, (_, i) => [`p${i}`, {}]));
    expect(errors({ profiles })).toContainEqual({
      path: 'spec.profiles',
      message: MESSAGES.tooManyEntries(128),
    });
  });

  it('members per membership: at most 512', () => {
    const members = Array.from({ length: 513 }, (_, i) => ({ name: `m${i}` }));
    expect(errors({ roles: [role('app')], memberships: [{ role: 'app', members }] })).toContainEqual({
      path: 'spec.memberships[0].members',
      message: MESSAGES.tooManyItems(512),
    });
  });

  it('default_privileges[].grant entries: at most 64', () => {
    const grantItems = Array.from({ length: 65 }, () => ({
      on_type: 'table',
      privileges: ['SELECT'],
      role: 'app',
    }));
    expect(
      errors({ roles: [role('app')], default_privileges: [{ owner: 'o', schema: 's', grant: grantItems }] }),
    ).toContainEqual({ path: 'spec.default_privileges[0].grant', message: MESSAGES.tooManyItems(64) });
  });

  it('profile grants / default_privileges / config entries: 64 / 32 / 32', () => {
    const grants = Array.from({ length: 65 }, () => ({ object: { type: 'table' }, privileges: ['SELECT'] }));
    const defaults = Array.from({ length: 33 }, () => ({ on_type: 'table', privileges: ['SELECT'] }));
    const config = Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`x.k${i}`, 'v']));
    const found = errors({ profiles: { p: { grants, default_privileges: defaults, config } } });
    expect(found).toContainEqual({ path: 'spec.profiles.p.grants', message: MESSAGES.tooManyItems(64) });
    expect(found).toContainEqual({
      path: 'spec.profiles.p.default_privileges',
      message: MESSAGES.tooManyItems(32),
    });
    expect(found).toContainEqual({ path: 'spec.profiles.p.config', message: MESSAGES.tooManyEntries(32) });
  });

  it('role config entries: at most 32; value length at most 256', () => {
    const config = Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`x.k${i}`, 'v']));
    expect(errors({ roles: [{ name: 'a', config }] })).toContainEqual({
      path: 'spec.roles[0].config',
      message: MESSAGES.tooManyEntries(32),
    });
    expect(errors({ roles: [{ name: 'a', config: { work_mem: 'x'.repeat(257) } }] })).toContainEqual({
      path: 'spec.roles[0].config.work_mem',
      message: MESSAGES.tooLong(256),
    });
    expect(errors({ roles: [{ name: 'a', config: { work_mem: 'x'.repeat(256) } }] })).toEqual([]);
  });

  it('schema binding profiles: at most 64', () => {
    const profiles = Array.from({ length: 65 }, (_, i) => `p${i}`);
    expect(errors({ schemas: [{ name: 's', profiles }] })).toContainEqual({
      path: 'spec.schemas[0].profiles',
      message: MESSAGES.tooManyItems(64),
    });
  });
});

describe('names: 1..63 characters and at most 63 UTF-8 bytes', () => {
  it('rejects an empty role name', () => {
    expect(errors({ roles: [{ name: '' }] })).toEqual([
      { path: 'spec.roles[0].name', message: MESSAGES.tooShort(1) },
    ]);
  });

  it('rejects a 64-character role name', () => {
    expect(errors({ roles: [{ name: 'a'.repeat(64) }] })).toContainEqual({
      path: 'spec.roles[0].name',
      message: MESSAGES.tooLong(63),
    });
  });

  it('accepts a 63-character ASCII role name', () => {
    expect(errors({ roles: [{ name: 'a'.repeat(63) }] })).toEqual([]);
  });

  it('rejects a 32-character é name: 64 bytes, which PostgreSQL would truncate into another role', () => {
    expect(errors({ roles: [{ name: 'é'.repeat(32) }] })).toEqual([
      { path: 'spec.roles[0].name', message: MESSAGES.tooManyBytes(63) },
    ]);
    expect(errors({ roles: [{ name: 'é'.repeat(31) }] })).toEqual([]);
  });

  it('counts astral characters as one character and four bytes', () => {
    expect(errors({ roles: [{ name: '😀'.repeat(15) }] })).toEqual([]);
    expect(errors({ roles: [{ name: '😀'.repeat(16) }] })).toEqual([
      { path: 'spec.roles[0].name', message: MESSAGES.tooManyBytes(63) },
    ]);
  });

  it('applies to schema names, owners, grantees, members and profile names', () => {
    const long = 'x'.repeat(64);
    const found = errors({
      default_owner: long,
      schemas: [{ name: long, owner: long }],
      grants: [{ role: long, object: { type: 'table', schema: long, name: 't' }, privileges: ['SELECT'] }],
      memberships: [{ role: long, members: [{ name: long }] }],
      retirements: [{ role: long, reassign_owned_to: `${long}y` }],
      profiles: { [long]: {} },
    });
    const paths = found.filter((e) => e.message === MESSAGES.tooLong(63)).map((e) => e.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        'spec.default_owner',
        'spec.schemas[0].name',
        'spec.schemas[0].owner',
        'spec.grants[0].role',
        'spec.grants[0].object.schema',
        'spec.memberships[0].role',
        'spec.memberships[0].members[0].name',
        'spec.retirements[0].role',
        'spec.retirements[0].reassign_owned_to',
        `spec.profiles.${long}`,
      ]),
    );
  });

  it('rejects NUL characters and unpaired surrogates in names', () => {
    expect(errors({ roles: [{ name: 'a\u0000b' }] })).toEqual([
      { path: 'spec.roles[0].name', message: MESSAGES.badCharacters },
    ]);
    expect(errors({ roles: [{ name: 'a\uD800' }] })).toEqual([
      { path: 'spec.roles[0].name', message: MESSAGES.badCharacters },
    ]);
  });

  it('object names other than function signatures are bounded at 63 bytes; function signatures at 256 characters', () => {
    const found = errors({
      roles: [role('app')],
      grants: [
        { role: 'app', object: { type: 'table', schema: 's', name: 'é'.repeat(32) }, privileges: ['SELECT'] },
        {
          role: 'app',
          object: { type: 'function', schema: 's', name: `f(${'integer, '.repeat(20)}integer)` },
          privileges: ['EXECUTE'],
        },
        {
          role: 'app',
          object: { type: 'function', schema: 's', name: 'f'.repeat(257) },
          privileges: ['EXECUTE'],
        },
      ],
    });
    expect(found).toEqual([
      { path: 'spec.grants[0].object.name', message: MESSAGES.objectNameBytes },
      { path: 'spec.grants[2].object.name', message: MESSAGES.tooLong(256) },
    ]);
  });
});

describe('privileges: 1..16 items from the enum', () => {
  const base = { roles: [role('app')] };
  const withPrivileges = (privileges: unknown) => ({
    ...base,
    grants: [{ role: 'app', object: { type: 'table', schema: 's', name: 't' }, privileges }],
  });

  it('rejects an empty privilege list', () => {
    expect(errors(withPrivileges([]))).toEqual([
      { path: 'spec.grants[0].privileges', message: MESSAGES.tooFewItems(1) },
    ]);
  });

  it('rejects more than 16 privileges', () => {
    expect(errors(withPrivileges(Array.from({ length: 17 }, () => 'SELECT')))).toEqual([
      { path: 'spec.grants[0].privileges', message: MESSAGES.tooManyItems(16) },
    ]);
  });

  it('rejects a privilege outside the enum (and lowercase spellings)', () => {
    expect(errors(withPrivileges(['select']))).toEqual([
      {
        path: 'spec.grants[0].privileges[0]',
        message: expect.stringMatching(/^must be one of CONNECT, CREATE/),
      },
    ]);
  });

  it('rejects a privilege PostgreSQL does not accept for the object type', () => {
    expect(errors(withPrivileges(['SELECT', 'EXECUTE']))).toEqual([
      { path: 'spec.grants[0].privileges[1]', message: MESSAGES.privilegeForType('EXECUTE', 'table') },
    ]);
  });
});

describe('types and enums', () => {
  it('content must be an object', () => {
    expect(errors([])).toEqual([{ path: 'spec', message: MESSAGES.mustBeObject }]);
    expect(validateContent('x', { root: 'spec.content' })).toEqual({
      ok: false,
      errors: [{ path: 'spec.content', message: MESSAGES.mustBeObject }],
    });
  });

  it('reports unknown fields, but accepts PostgresPolicy-only fields such as connection', () => {
    expect(errors({ connection: { secretRef: { name: 'db' } }, mode: 'apply', grantz: [] })).toEqual([
      { path: 'spec.grantz', message: expect.stringMatching(/^unknown field/) },
    ]);
    expect(errors({ roles: [{ name: 'a', logn: true }] })).toEqual([
      { path: 'spec.roles[0].logn', message: expect.stringMatching(/^unknown field/) },
    ]);
  });

  it('rejects wrong types with the field path', () => {
    expect(
      errors({ roles: [{ name: 'a', login: 'yes', connection_limit: 1.5 }], reconciliation_mode: 'strict' }),
    ).toEqual([
      {
        path: 'spec.reconciliation_mode',
        message: MESSAGES.notInEnum(['authoritative', 'additive', 'adopt']),
      },
      { path: 'spec.roles[0].login', message: MESSAGES.mustBeBoolean },
      { path: 'spec.roles[0].connection_limit', message: MESSAGES.mustBeInteger },
    ]);
  });

  it('treats null on a non-nullable field as absent, as Kubernetes pruning does', () => {
    expect(validateContent({ grants: null, roles: [{ name: 'a', external: null }] })).toEqual({
      ok: true,
      content: { roles: [{ name: 'a' }] },
    });
  });

  it('reports required fields', () => {
    expect(errors({ grants: [{}] })).toEqual([
      { path: 'spec.grants[0].role', message: MESSAGES.required },
      { path: 'spec.grants[0].object', message: MESSAGES.required },
      { path: 'spec.grants[0].privileges', message: MESSAGES.required },
    ]);
  });

  it('returns all errors, not the first', () => {
    const found = errors({
      roles: [{ name: '' }, { name: 'PUBLIC' }],
      schemas: [{}],
      retirements: [{ role: 'pg_x' }],
    });
    expect(found.length).toBe(4);
  });

  it('uses the root option as path prefix (candidate content)', () => {
    expect(validateContent({ roles: [{ name: '' }] }, { root: 'spec.content' })).toEqual({
      ok: false,
      errors: [{ path: 'spec.content.roles[0].name', message: MESSAGES.tooShort(1) }],
    });
  });
});
