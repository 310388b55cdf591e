// Every valid Kubernetes name (and any other string) survives the trip through a subject token, and
// the token is always one NATS token that cannot collide with wildcards or reserved `_` markers.
import fc from 'fast-check';
import {
  RESOURCE_KINDS,
  deadLetterOrigin,
  deadLetterSubject,
  decodeSubjectToken,
  encodeSubjectToken,
  parseResourceSubject,
  resourceSubject,
} from './subjects.js';
import { subjectMatches } from './subject-match.js';

/** What NATS and the informer branch's reserved markers require of a token. */
function assertSafeToken(token: string): void {
  expect(token.length).toBeGreaterThan(0);
  expect(token).not.toMatch(/[.*>\s]/);
  expect(token.startsWith('_')).toBe(false);
  expect(token.startsWith('$')).toBe(false);
}

/** A DNS-1123 subdomain: lower-case labels of [a-z0-9-] joined by dots, at most 253 characters. */
const dnsLabel = fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/).filter((s) => s.length <= 63);
const dnsSubdomain = fc
  .array(dnsLabel, { minLength: 1, maxLength: 8 })
  .map((labels) => labels.join('.'))
  .filter((s) => s.length <= 253);

describe('subject tokens', () => {
  it('decode(encode(s)) === s for arbitrary strings, and the token is always one safe token', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.string({ unit: 'grapheme' })),
        (s) => {
          const token = encodeSubjectToken(s);
          assertSafeToken(token);
          expect(decodeSubjectToken(token)).toBe(s);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('keeps lone surrogates, control characters, wildcards and whitespace', () => {
    for (const s of [
      '\uD800',
      'a\uDC00b',
      '\u0000',
      '*',
      '>',
      ' ',
      '\t\n',
      '_resync',
      '$JS',
      '~',
      '%',
      '%41',
      '',
    ]) {
      const token = encodeSubjectToken(s);
      assertSafeToken(token);
      expect(decodeSubjectToken(token)).toBe(s);
    }
  });

  it('names without special characters stay readable; dots become ~', () => {
    expect(encodeSubjectToken('orders')).toBe('orders');
    expect(encodeSubjectToken('team-a')).toBe('team-a');
    expect(encodeSubjectToken('app.prod')).toBe('app~prod');
    expect(encodeSubjectToken('owner.cluster.credentials.postgresql.example.com')).toBe(
      'owner~cluster~credentials~postgresql~example~com',
    );
  });

  it('every DNS-1123 subdomain up to 253 characters is encoded without growing', () => {
    fc.assert(
      fc.property(dnsSubdomain, (name) => {
        const token = encodeSubjectToken(name);
        assertSafeToken(token);
        expect(token).toHaveLength(name.length);
        expect(decodeSubjectToken(token)).toBe(name);
      }),
    );
    const longest = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`;
    expect(longest).toHaveLength(253);
    expect(decodeSubjectToken(encodeSubjectToken(longest))).toBe(longest);
  });

  it.each([
    ['', 'empty'],
    ['a.b', 'a dot'],
    ['_resync', 'a reserved marker'],
    ['%41', 'a non-canonical escape of a safe character'],
    ['%2e', 'lower-case hex'],
    ['%u002E', 'a long escape of an ASCII character'],
    ['%Z1', 'a malformed escape'],
    ['a%', 'a truncated escape'],
    ['*', 'a wildcard'],
  ])('refuses %j (%s)', (token) => {
    expect(decodeSubjectToken(token)).toBeUndefined();
  });

  it('one string has exactly one token (a decoded token re-encodes to itself)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (token) => {
        const decoded = decodeSubjectToken(token);
        if (decoded !== undefined) expect(encodeSubjectToken(decoded)).toBe(token);
      }),
    );
  });
});

describe('resource subjects', () => {
  it('round-trips kind, namespace and name for every kind, under any root', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...RESOURCE_KINDS),
        fc.string(),
        fc.string(),
        fc.constantFrom('rp', 'sbx_abc123'),
        (kind, namespace, name, root) => {
          const subject = resourceSubject(kind, namespace, name, root);
          expect(subject.split('.')).toHaveLength(5);
          expect(subjectMatches(`${root}.resource.${kind}.*.*`, subject)).toBe(true);
          expect(parseResourceSubject(subject, root)).toEqual({ kind, namespace, name });
        },
      ),
    );
  });

  it('keeps plain names readable and encodes dotted ones', () => {
    expect(resourceSubject('postgrespolicy', 'team-a', 'orders')).toBe(
      'rp.resource.postgrespolicy.team-a.orders',
    );
    expect(resourceSubject('secret', 'team-a', 'app.prod')).toBe('rp.resource.secret.team-a.app~prod');
  });

  it.each([
    ['rp.resource.secret.team-a', 'too few tokens'],
    ['rp.resource.secret.team-a.x.y', 'too many tokens'],
    ['rp.resource.pod.team-a.x', 'an unknown kind'],
    ['rp.resource.secret._resync', 'a resync marker'],
    ['rp.resource.secret.team-a._x', 'a reserved name token'],
    ['sbx.resource.secret.team-a.x', 'another root'],
    ['rp.execute.request', 'another subject'],
  ])('%s is not a resource subject (%s)', (subject) => {
    expect(parseResourceSubject(subject)).toBeUndefined();
  });

  it('parses a sandbox root only when asked for it', () => {
    const subject = resourceSubject('configmap', 'ns', 'a.b', 'sbx_1');
    expect(parseResourceSubject(subject)).toBeUndefined();
    expect(parseResourceSubject(subject, 'sbx_1')).toEqual({
      kind: 'configmap',
      namespace: 'ns',
      name: 'a.b',
    });
  });
});

describe('dead-letter subjects', () => {
  it('keep the original subject, encoded names included', () => {
    const original = resourceSubject('secret', 'ns', 'owner.cluster.credentials');
    const letter = deadLetterSubject(original);
    expect(deadLetterOrigin(letter)).toBe(original);
    expect(parseResourceSubject(deadLetterOrigin(letter)!)).toEqual({
      kind: 'secret',
      namespace: 'ns',
      name: 'owner.cluster.credentials',
    });
    expect(deadLetterOrigin('rp.execute.request')).toBeUndefined();
  });
});
