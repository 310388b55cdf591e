// Admission conformance: every rule and message of the spec, replayed against admit() step by step.
// The same CONFORMANCE_CASES drive the emulator suite through @kubernetes/client-node.
import { admit } from '../admission/admit.js';
import { fieldErrorString } from '../admission/field-errors.js';
import type { JsonObject } from '../admission/prune-defaults.js';
import { CONFORMANCE_CASES, expectedErrorLine, type ConformanceCase } from './conformance-cases.js';
import { applyMergePatch, getPath } from './merge-patch.js';

function replay(c: ConformanceCase): void {
  let stored: JsonObject | undefined;
  c.steps.forEach((step, i) => {
    const where = `${c.name} step ${i + 1} (${step.op}${step.op === 'patch' && step.subresource ? ' status' : ''})`;
    let result: ReturnType<typeof admit>;
    if (step.op === 'create') {
      if (stored !== undefined) throw new Error(`${where}: case creates an object that already exists`);
      expect(step.object['kind']).toBe(c.kind);
      result = admit({ kind: c.kind, operation: 'CREATE', object: step.object });
    } else {
      if (stored === undefined) throw new Error(`${where}: patch before a successful create`);
      result = admit({
        kind: c.kind,
        operation: 'UPDATE',
        object: applyMergePatch(stored, step.patch),
        oldObject: stored,
        ...(step.subresource !== undefined ? { subresource: step.subresource } : {}),
      });
    }
    const exp = step.expect;
    if (exp.allowed) {
      expect({ where, errors: result.allowed ? [] : result.errors.map(fieldErrorString) }).toEqual({
        where,
        errors: [],
      });
      if (!result.allowed) return;
      stored = result.object;
      if (exp.stored !== undefined) expect(stored).toMatchObject(exp.stored);
      for (const path of exp.absent ?? [])
        expect({ where, path, value: getPath(stored, path) }).toEqual({ where, path, value: undefined });
    } else {
      expect({ where, allowed: result.allowed }).toEqual({ where, allowed: false });
      if (result.allowed) return;
      const line = expectedErrorLine(exp);
      expect({ where, lines: result.errors.map(fieldErrorString) }).toEqual({
        where,
        lines: expect.arrayContaining([line]),
      });
      expect(result.status.code).toBe(422);
      expect(result.status.message).toContain(`${c.kind}.rolepolicy.io "`);
      expect(result.status.message).toContain(line);
      expect(result.status.details.causes).toContainEqual({
        reason: expect.any(String),
        field: exp.field,
        message: exp.body,
      });
    }
  });
}

describe('admission conformance (spec rules and messages)', () => {
  it.each(CONFORMANCE_CASES.map((c) => [c.name, c] as const))('%s', (_name, c) => replay(c));

  it('every case shows both an accepted and a rejected write, except the defaults cases', () => {
    for (const c of CONFORMANCE_CASES) {
      if (c.name.includes('defaults') || c.name.includes('not defaulted')) continue;
      const outcomes = new Set(c.steps.map((s) => s.expect.allowed));
      const rejectOnly = c.steps.length === 1 && !c.steps[0]?.expect.allowed;
      const acceptOnly = c.steps.length === 1 && c.steps[0]?.expect.allowed === true;
      if (rejectOnly || acceptOnly) continue; // paired with a sibling case of the same rule
      expect({ name: c.name, both: outcomes.size }).toEqual({ name: c.name, both: 2 });
    }
  });

  it('re-sending a stored object unchanged is always admitted and stores the same object (idempotent writes)', () => {
    for (const c of CONFORMANCE_CASES) {
      let stored: JsonObject | undefined;
      for (const step of c.steps) {
        const r =
          step.op === 'create'
            ? admit({ kind: c.kind, operation: 'CREATE', object: step.object })
            : stored === undefined
              ? undefined
              : admit({
                  kind: c.kind,
                  operation: 'UPDATE',
                  object: applyMergePatch(stored, step.patch),
                  oldObject: stored,
                  ...(step.subresource !== undefined ? { subresource: step.subresource } : {}),
                });
        if (r === undefined || !r.allowed) continue;
        stored = r.object;
        for (const subresource of [undefined, 'status'] as const) {
          const again = admit({
            kind: c.kind,
            operation: 'UPDATE',
            object: stored,
            oldObject: stored,
            ...(subresource !== undefined ? { subresource } : {}),
          });
          expect({ name: c.name, again: again.allowed ? again.object : again.status.message }).toEqual({
            name: c.name,
            again: stored,
          });
        }
      }
    }
  });

  it('object names are unique across cases, so all cases can run in one namespace', () => {
    const names = CONFORMANCE_CASES.map((c) => {
      const first = c.steps[0];
      return first?.op === 'create' ? (first.object['metadata'] as { name: string }).name : '';
    });
    expect(new Set(names).size).toBe(names.length);
  });
});
