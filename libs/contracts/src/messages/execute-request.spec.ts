// Execution payloads at the boundary: v2 requests and v1 results round-trip, v1 requests still decode,
// and refusals name the broken rule without echoing a value (a misplaced secret must not reach logs).
import { decodePayload, encodePayload, validatePayload } from '../contract.js';
import { executeRequestContract, type ExecuteRequestV2 } from './execute-request.js';
import { executeResultContract, type ExecuteResultV1 } from './execute-result.js';

const request: ExecuteRequestV2 = {
  v: 2,
  plan: {
    apiVersion: 'rolepolicy.io/v1alpha1',
    kind: 'PostgresPolicyPlan',
    namespace: 'team-a',
    name: 'orders-1',
  },
  policy: {
    apiVersion: 'rolepolicy.io/v1alpha1',
    kind: 'PostgresPolicy',
    namespace: 'team-a',
    name: 'orders',
    uid: 'u1',
  },
  changeDigest: 'sha256:abc',
  changeDigestEncoding: 'rolepolicy.io/approval-effect/v1',
  idempotencyKey: 'u1/orders-1/sha256:abc',
  target: 'team-a/orders-db/DATABASE_URL',
  content: { roles: [{ name: 'app', login: true }] },
  mode: 'authoritative',
  allowSchemaOwnerTransfers: false,
  requirePhysicalIdentity: true,
  approvedIdentity: { physical: '7301', logical: 'sha256:f' },
  passwordSources: { app: 'app-login:password:41' },
  appliedPasswordSourceVersions: {},
};

const result: ExecuteResultV1 = {
  v: 1,
  plan: request.plan,
  policy: request.policy,
  idempotencyKey: request.idempotencyKey,
  phase: 'Failed',
  reason: 'ExecutionFailed',
  message: 'statement 2 of 3 failed (SQLSTATE 22023)',
  approvedDigest: 'sha256:abc',
  recomputedDigest: 'sha256:abc',
  executedDigest: null,
  statementCount: 0,
  failedAt: '2026-11-22T01:00:00.000Z',
  lastError: {
    message: 'failed',
    statementIndex: 1,
    statement: 'ALTER ROLE "app" SET "work_mem" TO \'x\';',
    sqlState: '22023',
  },
  reportedAt: '2026-11-22T01:00:00.000Z',
};

describe('execute request and result contracts', () => {
  it('a v2 request round-trips and is typed as version 2', () => {
    const decoded = decodePayload(executeRequestContract, encodePayload(executeRequestContract, request));
    expect(decoded).toEqual({ ok: true, value: request, version: 2 });
  });

  it('a v2 request carrying the resource sequences the planner saw round-trips; one without them still decodes', () => {
    const seen = { ...request, resourceSequences: { postgrespolicy: 41, postgrespolicyplan: 97 } };
    const decoded = decodePayload(executeRequestContract, encodePayload(executeRequestContract, seen));
    expect(decoded).toEqual({ ok: true, value: seen, version: 2 });
    expect(validatePayload(executeRequestContract, { ...request, resourceSequences: {} })).toMatchObject({
      ok: true,
    });
    expect(validatePayload(executeRequestContract, request)).toMatchObject({ ok: true, version: 2 });
  });

  it('resource sequences are positive integers of the two kinds the executor reads first', () => {
    for (const resourceSequences of [
      { postgrespolicy: 0 },
      { postgrespolicyplan: 1.5 },
      { postgrespolicyplan: -3 },
      { secret: 4 },
    ]) {
      expect(validatePayload(executeRequestContract, { ...request, resourceSequences })).toMatchObject({
        ok: false,
        reason: 'schema_mismatch',
      });
    }
  });

  it('v1 requests still decode (backward compatible)', () => {
    const v1 = { v: 1, plan: request.plan, changeDigest: 'sha256:abc', idempotencyKey: 'k' };
    expect(validatePayload(executeRequestContract, v1)).toMatchObject({ ok: true, version: 1 });
  });

  it('a v2 request without changeDigestEncoding is refused', () => {
    const { changeDigestEncoding: _omitted, ...rest } = request;
    expect(validatePayload(executeRequestContract, rest)).toMatchObject({
      ok: false,
      reason: 'schema_mismatch',
    });
  });

  it('a request carrying a connection URL is refused without echoing it', () => {
    const url = 'postgres://admin:hunter2@db/prod';
    const refused = validatePayload(executeRequestContract, { ...request, connection: { url } });
    expect(refused).toMatchObject({ ok: false, reason: 'schema_mismatch' });
    expect(refused.ok ? '' : refused.detail).not.toContain('hunter2');
  });

  it('results carry one of the executor phases and a five-character SQLSTATE', () => {
    expect(validatePayload(executeResultContract, result)).toMatchObject({ ok: true, version: 1 });
    expect(validatePayload(executeResultContract, { ...result, phase: 'Pending' })).toMatchObject({
      ok: false,
    });
    const badState = { ...result, lastError: { ...result.lastError, sqlState: 'E1' } };
    expect(validatePayload(executeResultContract, badState)).toMatchObject({ ok: false });
  });
});
