import fc from 'fast-check';
import { contentDigest, pruneContent } from './content-digest.js';

// JSON values as policy content holds them: safe integers only (int64 travels as strings).
const json: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.constant(null),
    fc.boolean(),
    fc.integer(),
    fc.string({ unit: 'grapheme' }),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.string({ unit: 'grapheme' }), tie('value'), { maxKeys: 4 }),
  ),
})).value;

describe('contentDigest', () => {
  it('drops nulls and empties after canonicalising children, so an object that empties out vanishes', () => {
    expect(pruneContent({ a: null, b: [], c: {}, d: { e: null, f: [] }, g: 1 })).toEqual({ g: 1 });
  });

  it('keeps array elements positionally, {} elements included (list order is content)', () => {
    expect(pruneContent({ a: [{ x: null }, { y: 1 }] })).toEqual({ a: [{}, { y: 1 }] });
    expect(contentDigest({ grants: [1, 2] }).digest).not.toBe(contentDigest({ grants: [2, 1] }).digest);
  });

  it('fills the API defaults on both sides: an omitted defaulted field equals its default (ADR 0007)', () => {
    expect(contentDigest({}).digest).toBe(contentDigest({ reconciliation_mode: 'authoritative' }).digest);
    expect(contentDigest({}).digest).not.toBe(contentDigest({ reconciliation_mode: 'additive' }).digest);
    expect(contentDigest({ roles: [{ name: 'app' }] })).toEqual(
      contentDigest({ roles: [{ name: 'app', external: false, preserve_undeclared_grants: false }] }),
    );
  });

  it('never resolves engine fallbacks that are not API defaults (role_pattern, member inherit)', () => {
    expect(contentDigest({}).digest).not.toBe(contentDigest({ role_pattern: '{schema}-{profile}' }).digest);
    const member = (inherit?: boolean) => ({
      memberships: [{ role: 'r', members: [{ name: 'm', inherit }] }],
    });
    expect(contentDigest(member()).digest).not.toBe(contentDigest(member(true)).digest);
  });

  it('a candidate written like its policy promotes: the stored, API-defaulted policy digests equally', () => {
    const written = {
      roles: [{ name: 'app', login: true, password: { generate: {} } }],
      memberships: [{ role: 'readers', members: [{ name: 'app' }] }],
      retirements: [{ role: 'old' }],
    };
    const storedPolicy = {
      ...written,
      connection: { secretRef: { name: 'pg' } },
      reconciliation_mode: 'authoritative',
      roles: [
        {
          name: 'app',
          login: true,
          external: false,
          preserve_undeclared_grants: false,
          password: { generate: { length: 32, secretKey: 'password', secretName: '{policy}-gen-{role}' } },
        },
      ],
      memberships: [{ role: 'readers', members: [{ name: 'app' }], exclusive: false }],
      retirements: [{ role: 'old', drop_owned: false, terminate_sessions: false }],
      grants: [],
      profiles: {},
    };
    expect(contentDigest(storedPolicy)).toEqual(contentDigest(written));
  });

  it('a generated password written as `generate: {}` never digests like no password at all', () => {
    expect(contentDigest({ roles: [{ name: 'app', password: { generate: {} } }] }).digest).not.toBe(
      contentDigest({ roles: [{ name: 'app' }] }).digest,
    );
  });

  it('reads only the content fields of a policy spec, so a promoted candidate digests equally', () => {
    const content = { roles: [{ name: 'app', login: true }], reconciliation_mode: 'additive' };
    const policySpec = { ...content, connection: { secretRef: { name: 'pg', key: 'url' } }, interval: '5m' };
    expect(contentDigest(policySpec)).toEqual(contentDigest(content));
  });

  it('an explicit empty list equals an omitted one (nulls and empties dropped)', () => {
    expect(contentDigest({ grants: [], roles: null, profiles: {} })).toEqual(contentDigest({}));
  });

  it('is independent of key order', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.constantFrom('a', 'b', 'name', 'login'), json), (role) => {
        const reversed = Object.fromEntries(Object.entries(role).reverse());
        expect(contentDigest({ roles: [reversed] })).toEqual(contentDigest({ roles: [role] }));
      }),
    );
  });

  it('tags the encoding rolepolicy.io/policy-content/v2', () => {
    expect(contentDigest({}).encoding).toBe('rolepolicy.io/policy-content/v2');
  });
});
