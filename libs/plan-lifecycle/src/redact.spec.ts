// Rule: secrets (passwords, URLs with credentials, SCRAM verifiers) never reach last_error, lastError or events.
import { MAX_ERROR_CHARS, redactSecrets } from './redact.js';

describe('last_error redaction', () => {
  it('strips credentials from connection URLs', () => {
    const out = redactSecrets('connect failed: postgres://app:hunter2@db.internal:5432/orders timed out');
    expect(out).not.toContain('hunter2');
    expect(out).not.toContain('app:');
    expect(out).toContain('postgres://[REDACTED]@db.internal:5432/orders');
  });

  it('strips PASSWORD literals, including doubled quotes', () => {
    const out = redactSecrets(`statement failed: ALTER ROLE "app" PASSWORD 'it''s-s3cret' VALID UNTIL 'x'`);
    expect(out).not.toContain('s3cret');
    expect(out).toContain(`PASSWORD '[REDACTED]'`);
    expect(out).toContain(`VALID UNTIL 'x'`);
  });

  it('strips SCRAM verifiers and conninfo passwords', () => {
    const verifier = 'SCRAM-SHA-256$4096:c2FsdA==$c3RvcmVk:c2VydmVy';
    const out = redactSecrets(`bad verifier ${verifier}; host=db password=topsecret user=app`);
    expect(out).not.toContain('c3RvcmVk');
    expect(out).not.toContain('topsecret');
    expect(out).toContain('user=app');
  });

  it('strips password query parameters', () => {
    expect(redactSecrets('postgres://db/x?sslmode=require&password=pw1')).not.toContain('pw1');
  });

  it('bounds stored error text', () => {
    expect(redactSecrets('x'.repeat(10_000)).length).toBeLessThanOrEqual(MAX_ERROR_CHARS);
  });

  it('leaves ordinary messages unchanged', () => {
    expect(redactSecrets('permission denied for schema inventory')).toBe(
      'permission denied for schema inventory',
    );
  });
});
