// Payloads are validated on receipt: unknown versions and malformed payloads are refused with a reason
// that names the rule broken but never echoes payload values (they may be secrets).
import type { TSchema } from '@sinclair/typebox';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import fc from 'fast-check';

import { decodePayload, encodePayload, validatePayload, type MessageContract } from './contract.js';
import { executeRequestContract, type ExecuteRequestV1 } from './messages/execute-request.js';
import { k8sCommandContract } from './messages/k8s-command.js';
import { recordEventCommand } from './messages/k8s-event.js';
import { resourceEventContract } from './messages/resource-event.js';

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

  it('decides and explains every payload as one all-errors validation did: same verdict, same detail', () => {
    // The validation as first written: one ajv with allErrors, the first five errors by path and rule.
    type AddFormats = (ajv: Ajv) => Ajv;
    const addFormats =
      (addFormatsModule as unknown as { default?: AddFormats }).default ??
      (addFormatsModule as unknown as AddFormats);
    const ajv = addFormats(new Ajv({ allErrors: true, strict: true, verbose: false }));
    const compiledReference = new Map<string, ReturnType<Ajv['compile']>>();
    const reference = (contract: MessageContract, value: Record<string, unknown>): string => {
      let validate = compiledReference.get(contract.name);
      if (validate === undefined) {
        validate = ajv.compile(contract.versions[1] as TSchema);
        compiledReference.set(contract.name, validate);
      }
      if (validate(value)) return 'ok';
      const detail = (validate.errors ?? [])
        .slice(0, 5)
        .map((e) => `${e.instancePath || '/'} ${e.message ?? e.keyword}`)
        .join('; ');
      return `${contract.name} v1: ${detail}`;
    };
    const outcome = (contract: MessageContract, value: Record<string, unknown>): string => {
      const result = validatePayload(contract, value);
      return result.ok ? 'ok' : result.detail;
    };
    const target = {
      apiVersion: 'rolepolicy.io/v1alpha1',
      kind: 'PostgresPolicy',
      namespace: 'ns',
      name: 'p',
    };
    const valid: readonly [MessageContract, Record<string, unknown>][] = [
      [executeRequestContract, validExecute],
      [
        k8sCommandContract,
        recordEventCommand(target, {
          type: 'Normal',
          reason: 'PlanApplied',
          message: 'applied 3 statements',
          action: 'Apply',
          component: 'rolepolicy-planner',
        }),
      ],
      [k8sCommandContract, { v: 1, command: 'patch-status', target, idempotencyKey: 'k', status: { a: 1 } }],
      [
        resourceEventContract,
        {
          v: 1,
          type: 'upsert',
          observedAt: '2026-11-27T12:00:00Z',
          object: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'ns' }, keys: ['a'] },
        },
      ],
    ];
    const replacement = fc.oneof(
      fc.constant(undefined),
      fc.constant(null),
      fc.string({ maxLength: 3 }),
      fc.integer(),
      fc.boolean(),
      fc.constantFrom('Secret', 'record-event', 'patch-status', '2026-13-01T00:00:00Z', 'sha256:abc'),
      fc.array(fc.string({ maxLength: 2 }), { maxLength: 2 }),
      fc.dictionary(fc.string({ maxLength: 2 }), fc.string({ maxLength: 2 }), { maxKeys: 2 }),
    );
    // Replaces (or removes, or adds) the member at a path picked by `choices`.
    const mutate = (value: unknown, choices: readonly number[], by: unknown): unknown => {
      if (typeof value !== 'object' || value === null || Array.isArray(value) || choices.length === 0)
        return by;
      const record = value as Record<string, unknown>;
      const keys = [...Object.keys(record), 'extra'];
      const key = keys[choices[0]! % keys.length]!;
      const next = { ...record, [key]: mutate(record[key], choices.slice(1), by) };
      if (next[key] === undefined) delete next[key];
      return next;
    };
    fc.assert(
      fc.property(
        fc.constantFrom(...valid),
        fc.array(fc.nat(), { minLength: 1, maxLength: 4 }),
        replacement,
        ([contract, payload], choices, by) => {
          const value = mutate(payload, choices, by) as Record<string, unknown>;
          // Refusals of the version (missing, unknown) come before the schema and are tested above.
          fc.pre(value['v'] === 1);
          expect(outcome(contract, value)).toBe(reference(contract, value));
        },
      ),
      { numRuns: 1500 },
    );
    for (const [contract, payload] of valid) expect(outcome(contract, payload)).toBe('ok');
  });
});
