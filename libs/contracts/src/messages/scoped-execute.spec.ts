// Scoped execution payloads round-trip, and anything that is not a reference, a hash or a membership
// statement (a connection URL, an extra field) is refused at the boundary without echoing it.
import { decodePayload, encodePayload, validatePayload } from '../contract.js';
import {
  scopedExecuteRequestContract,
  scopedExecuteResultContract,
  scopedRevokeRequestContract,
  type ScopedExecuteRequestV1,
  type ScopedExecuteResultV1,
} from './scoped-execute.js';

const ref = (kind: string, name: string, uid?: string) => ({
  apiVersion: 'rolepolicy.io/v1alpha1',
  kind,
  namespace: 'team-a',
  name,
  ...(uid ? { uid } : {}),
});

const request: ScopedExecuteRequestV1 = {
  v: 1,
  plan: ref('PostgresPolicyPlan', 'alice-ro-6f1c2d3e-activate-0123456789ab'),
  request: ref('EphemeralAccessRequest', 'alice-ro', 'r-1'),
  policy: ref('PostgresPolicy', 'orders', 'p-1'),
  operation: 'Activate',
  bundleHash: 'sha256:0123',
  idempotencyKey: 'r-1/Activate/sha256:0123',
};

const result: ScopedExecuteResultV1 = {
  ...request,
  outcome: 'Applied',
  statements: ['GRANT "readonly" TO "alice" WITH INHERIT TRUE;'],
  retained: [],
  reason: 'MembershipsGranted',
  message: '1 membership granted',
  reportedAt: '2026-11-25T17:00:00.000Z',
};

describe('scoped execution contracts', () => {
  it('a request and a result round-trip', () => {
    expect(
      decodePayload(scopedExecuteRequestContract, encodePayload(scopedExecuteRequestContract, request)),
    ).toEqual({
      ok: true,
      value: request,
      version: 1,
    });
    expect(
      decodePayload(scopedExecuteResultContract, encodePayload(scopedExecuteResultContract, result)),
    ).toEqual({
      ok: true,
      value: result,
      version: 1,
    });
  });

  it('refuses an unknown operation and a connection riding along, without echoing it', () => {
    expect(validatePayload(scopedExecuteRequestContract, { ...request, operation: 'Grant' })).toMatchObject({
      ok: false,
      reason: 'schema_mismatch',
    });
    const url = 'postgres://admin:hunter2@db/prod';
    const refused = validatePayload(scopedExecuteRequestContract, { ...request, connection: url });
    expect(refused).toMatchObject({ ok: false, reason: 'schema_mismatch' });
    expect(refused.ok ? '' : refused.detail).not.toContain('hunter2');
  });

  it('a request carrying the resource sequences the scheduler saw round-trips; one without them still decodes', () => {
    const resourceSequences = {
      postgrespolicy: 3,
      postgrespolicyplan: 97,
      ephemeralaccessrequest: 96,
      ephemeralaccesspolicy: 4,
    };
    for (const contract of [scopedExecuteRequestContract, scopedRevokeRequestContract]) {
      const seen = { ...request, resourceSequences };
      expect(decodePayload(contract, encodePayload(contract, seen))).toEqual({
        ok: true,
        value: seen,
        version: 1,
      });
      expect(validatePayload(contract, { ...request, resourceSequences: {} })).toMatchObject({ ok: true });
      expect(validatePayload(contract, request)).toMatchObject({ ok: true, version: 1 });
    }
  });

  it('resource sequences are positive integers of the kinds the executor verifies against', () => {
    for (const resourceSequences of [
      { postgrespolicy: 0 },
      { ephemeralaccessrequest: 1.5 },
      { postgrespolicyplan: -3 },
      { secret: 4 },
    ]) {
      expect(validatePayload(scopedExecuteRequestContract, { ...request, resourceSequences })).toMatchObject({
        ok: false,
        reason: 'schema_mismatch',
      });
    }
  });

  it('refuses an unknown outcome', () => {
    expect(validatePayload(scopedExecuteResultContract, { ...result, outcome: 'Maybe' })).toMatchObject({
      ok: false,
      reason: 'schema_mismatch',
    });
  });
});
