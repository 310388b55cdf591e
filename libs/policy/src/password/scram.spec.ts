import { preparePassword, scramSha256Verifier, parseScramVerifier } from './scram.js';

// RFC 7677 section 3 example: password "pencil", salt W22ZaJ0SNY7soEsUEjb6gQ==, 4096 iterations.
const RFC_SALT = Buffer.from('W22ZaJ0SNY7soEsUEjb6gQ==', 'base64');

describe('scramSha256Verifier', () => {
  it('produces the PostgreSQL verifier format with the default 4096 iterations', () => {
    const verifier = scramSha256Verifier('pencil', RFC_SALT);
    expect(verifier).toMatch(
      /^SCRAM-SHA-256\$4096:W22ZaJ0SNY7soEsUEjb6gQ==\$[A-Za-z0-9+/]{43}=:[A-Za-z0-9+/]{43}=$/,
    );
  });

  it('gives the known-answer StoredKey and ServerKey of the RFC 7677 example credentials', () => {
    // Known-answer vector for these credentials (the keys behind the RFC's ClientProof/ServerSignature);
    // scram.int-spec.ts checks the same equality against verifiers the real server computes.
    const parsed = parseScramVerifier(scramSha256Verifier('pencil', RFC_SALT))!;
    expect(parsed.storedKey).toBe('WG5d8oPm3OtcPnkdi4Uo7BkeZkBFzpcXkuLmtbsT4qY=');
    expect(parsed.serverKey).toBe('wfPLwcE6nTWhTAmQ7tl2KeoiWGPlZqQxSrmfPwDl2dU=');
  });

  it('is deterministic for a given salt and different for a different salt', () => {
    const a = scramSha256Verifier('secret', Buffer.alloc(16, 1));
    expect(scramSha256Verifier('secret', Buffer.alloc(16, 1))).toBe(a);
    expect(scramSha256Verifier('secret', Buffer.alloc(16, 2))).not.toBe(a);
  });

  it('honours the iteration count', () => {
    expect(scramSha256Verifier('secret', Buffer.alloc(16, 1), 10000)).toMatch(/^SCRAM-SHA-256\$10000:/);
  });

  it('never contains the cleartext', () => {
    expect(scramSha256Verifier('hunter2hunter2', Buffer.alloc(16, 3))).not.toContain('hunter2');
  });

  it('leaves the caller salt untouched', () => {
    const salt = Buffer.alloc(16, 7);
    scramSha256Verifier('secret', salt);
    expect(salt.equals(Buffer.alloc(16, 7))).toBe(true);
  });

  it('rejects an empty salt and non-positive iterations', () => {
    expect(() => scramSha256Verifier('x', Buffer.alloc(0))).toThrow(RangeError);
    expect(() => scramSha256Verifier('x', Buffer.alloc(16), 0)).toThrow(RangeError);
  });
});

describe('preparePassword (SASLprep as PostgreSQL and libpq apply it)', () => {
  it('leaves ASCII untouched and normalises what the server normalises', () => {
    expect(preparePassword('correct horse')).toBe('correct horse');
    expect(preparePassword('of\uFB01ce')).toBe('office');
    expect(preparePassword('a\u00A0b')).toBe('a b');
    expect(preparePassword('x\u00ADy')).toBe('xy');
  });

  it('keeps the raw password when SASLprep refuses it (prohibited, unassigned, bidi, empty)', () => {
    for (const raw of ['\uE000pw', 'pw\u{1F600}\uFB01', '\u0627\u0628c', 'bell\u0007', '\u00AD']) {
      expect(preparePassword(raw)).toBe(raw);
    }
  });
});
