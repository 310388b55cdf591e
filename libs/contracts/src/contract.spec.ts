// Payloads are validated on receipt: unknown versions and malformed payloads are refused with a reason
// that names the rule broken but never echoes payload values (they may be secrets).
import { decodePayload, encodePayload, validatePayload } from './contract.js';
import { executeRequestContract, type ExecuteRequestV1 } from './messages/execute-request.js';
import { k8sCommandContract } from './messages/k8s-command.js';

const bytes = (value: unknown): Uint8Array =>
  new TextEncoder().encode(typeof value === 'string' ? value : JSON.stringify(value));

const validExecute: ExecuteRequestV1 = {
  v: 1,
  plan: {
    apiVersion: 'rolepolicy.io/v1alpha1',
    kind: 'PostgresPolicyPlan',
    namespace: 'team-a',
    name: 'orders-plan-1',
  },
  changeDigest: 'sha256:abc',
  idempotencyKey: 'uid-1/3/sha256:abc',
};

describe('versioned payload contracts', () => {
  it('accepts a payload of a supported version and types it', () => {
    const result = decodePayload(executeRequestContract, bytes(validExecute));
    expect(result).toEqual({ ok: true, value: validExecute, version: 1 });
  });

  it('refuses bytes that are not JSON', () => {
    expect(decodePayload(executeRequestContract, bytes('{not json'))).toMatchObject({
      ok: false,
      reason: 'malformed_json',
    });
  });

  it('refuses a payload without a version', () => {
    const { v: _v, ...rest } = validExecute;
    expect(decodePayload(executeRequestContract, bytes(rest))).toMatchObject({
      ok: false,
      reason: 'missing_version',
    });
  });

  it('refuses an unknown version instead of half-processing it', () => {
    const result = decodePayload(executeRequestContract, bytes({ ...validExecute, v: 99 }));
    expect(result).toMatchObject({ ok: false, reason: 'unknown_version' });
    expect(result.ok ? '' : result.detail).toContain('supported: 1, 2');
  });

  it('refuses a schema mismatch and names the path, not the value', () => {
    const secret = 'postgres://admin:hunter2@db/prod';
    const result = decodePayload(
      executeRequestContract,
      bytes({ ...validExecute, changeDigest: 42, extra: secret }),
    );
    expect(result).toMatchObject({ ok: false, reason: 'schema_mismatch' });
    const detail = result.ok ? '' : result.detail;
    expect(detail).toContain('/changeDigest');
    expect(detail).not.toContain('hunter2');
  });

  it('refuses a non-object payload', () => {
    expect(validatePayload(executeRequestContract, [1, 2])).toMatchObject({
      ok: false,
      reason: 'not_an_object',
    });
  });

  it('validates each member of a discriminated command union', () => {
    const target = { apiVersion: 'v1', kind: 'Secret', namespace: 'team-a', name: 'db' };
    expect(
      validatePayload(k8sCommandContract, { v: 1, command: 'delete-resource', target, idempotencyKey: 'k' })
        .ok,
    ).toBe(true);
    expect(
      validatePayload(k8sCommandContract, { v: 1, command: 'explode', target, idempotencyKey: 'k' }).ok,
    ).toBe(false);
  });

  it('refuses to send a payload that breaks its own contract', () => {
    expect(() => encodePayload(executeRequestContract, { ...validExecute, changeDigest: '' })).toThrow(
      /refusing to send invalid/,
    );
  });
});
