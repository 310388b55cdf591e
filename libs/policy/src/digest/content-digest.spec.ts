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

  it('never resolves defaults: an omitted field differs from its explicit default', () => {
    expect(contentDigest({}).digest).not.toBe(contentDigest({ role_pattern: '{schema}-{profile}' }).digest);
    expect(contentDigest({}).digest).not.toBe(contentDigest({ reconciliation_mode: 'authoritative' }).digest);
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

  it('tags the encoding rolepolicy.io/policy-content/v1', () => {
    expect(contentDigest({}).encoding).toBe('rolepolicy.io/policy-content/v1');
  });
});
