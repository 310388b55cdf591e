// Property tests: validation never throws and always points at paths that exist in the input; expansion is
// independent of the input order of roles, grants, memberships, bindings and default privileges.

import fc from 'fast-check';
import type { PolicyContent } from '../model/index.js';
import { expandPolicy } from '../expansion/expand-policy.js';
import { validateContent } from './validate.js';

/** Splits `spec.grants[3].object["a b"]` into ['grants', 3, 'object', 'a b'] (root dropped). */
function parsePath(path: string, root: string): (string | number)[] {
  const rest = path.slice(root.length);
  const segments: (string | number)[] = [];
  const pattern = /\.([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]/gy;
  let match: RegExpExecArray | null;
  while ((match = pattern.exec(rest)) !== null) {
    if (match[1] !== undefined) segments.push(match[1]);
    else if (match[2] !== undefined) segments.push(Number(match[2]));
    else segments.push(JSON.parse(match[3]!) as string);
    if (pattern.lastIndex === rest.length) break;
  }
  expect(segments.length === 0 ? rest : 'parsed').toBe(rest === '' ? '' : 'parsed');
  return segments;
}

/** True when every segment but the last resolves in `value` (a missing last field is what "is required" names). */
function parentExists(value: unknown, segments: readonly (string | number)[]): boolean {
  let current: unknown = value;
  for (const segment of segments.slice(0, -1)) {
    if (typeof current !== 'object' || current === null) return false;
    current = (current as Record<string | number, unknown>)[segment];
    if (current === undefined) return false;
  }
  return segments.length === 0 || (typeof current === 'object' && current !== null);
}

function checkPaths(input: unknown): void {
  const result = validateContent(input);
  if (result.ok) return;
  expect(result.errors.length).toBeGreaterThan(0);
  for (const error of result.errors) {
    expect(error.path.startsWith('spec')).toBe(true);
    expect(error.message.length).toBeGreaterThan(0);
    expect(parentExists(input, parsePath(error.path, 'spec'))).toBe(true);
  }
}

const names = fc.constantFrom('app', 'etl', 'Reader', 'é', 'x😀', 'Public', 'team.a', 'b c');
const schemaNames = fc.constantFrom('s1', 's2', 'My Schema', 'ü');
const tablePrivileges = fc.subarray(['SELECT', 'INSERT', 'UPDATE', 'DELETE'] as const, { minLength: 1 });

const policyArb: fc.Arbitrary<PolicyContent> = fc
  .record({
    roles: fc.uniqueArray(names, { minLength: 1, maxLength: 6 }),
    login: fc.boolean(),
    bindings: fc.uniqueArray(schemaNames, { maxLength: 3 }),
    grants: fc.array(
      fc.record({
        grantee: fc.nat(),
        schema: schemaNames,
        name: fc.constantFrom('t1', 't2', '*'),
        privileges: tablePrivileges,
      }),
      { maxLength: 8 },
    ),
    edges: fc.array(fc.tuple(fc.nat(), fc.nat(), fc.option(fc.boolean())), { maxLength: 6 }),
    defaults: fc.array(fc.record({ grantee: fc.nat(), schema: schemaNames, privileges: tablePrivileges }), {
      maxLength: 4,
    }),
  })
  .map(({ roles, login, bindings, grants, edges, defaults }) => {
    const pick = (i: number) => roles[i % roles.length]!;
    const owner = 'owner';
    const seen = new Set<string>();
    const memberships = edges
      .map(([r, m, inherit]) => ({ role: pick(r), member: `m_${pick(m)}`, inherit }))
      .filter((e) => !seen.has(`${e.role}/${e.member}`) && seen.add(`${e.role}/${e.member}`) !== undefined);
    return {
      default_owner: owner,
      roles: [{ name: owner }, ...roles.map((name) => ({ name, login }))],
      profiles: {
        viewer: { grants: [{ object: { type: 'table' as const }, privileges: ['SELECT' as const] }] },
        editor: { login: true, config: { search_path: '{schema}, public' } },
      },
      schemas: bindings.map((name) => ({ name, profiles: ['viewer', 'editor'] })),
      grants: grants.map((g) => ({
        role: pick(g.grantee),
        object: { type: 'table' as const, schema: g.schema, name: g.name },
        privileges: g.privileges,
      })),
      memberships: memberships.map((e) => ({
        role: e.role,
        members: [{ name: e.member, ...(e.inherit !== null ? { inherit: e.inherit } : {}) }],
      })),
      default_privileges: defaults.map((d) => ({
        schema: d.schema,
        grant: [{ on_type: 'table' as const, privileges: d.privileges, role: pick(d.grantee) }],
      })),
    };
  });

function shuffle<T>(items: readonly T[] | undefined, seed: number): T[] {
  const out = [...(items ?? [])];
  let state = seed >>> 0 || 1;
  for (let i = out.length - 1; i > 0; i--) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    const j = state % (i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

describe('validation properties', () => {
  it('never throws on arbitrary JSON, and every error path exists in the input', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => checkPaths(value)),
      { numRuns: 200 },
    );
  });

  it('never throws on arbitrary JSON placed in any content field', () => {
    const field = fc.constantFrom(
      'roles',
      'grants',
      'memberships',
      'default_privileges',
      'profiles',
      'retirements',
      'schemas',
      'default_owner',
      'role_pattern',
      'reconciliation_mode',
    );
    fc.assert(
      fc.property(field, fc.jsonValue(), (key, value) => checkPaths({ [key]: value })),
      { numRuns: 200 },
    );
  });

  it('never throws when one value deep inside a valid policy is replaced by arbitrary JSON', () => {
    fc.assert(
      fc.property(policyArb, fc.nat(), fc.jsonValue(), (policy, index, replacement) => {
        const copy = JSON.parse(JSON.stringify(policy)) as Record<string, unknown>;
        const containers: Record<string, unknown>[] = [];
        const walk = (v: unknown): void => {
          if (typeof v === 'object' && v !== null) {
            containers.push(v as Record<string, unknown>);
            Object.values(v).forEach(walk);
          }
        };
        walk(copy);
        const target = containers[index % containers.length]!;
        const keys = Object.keys(target);
        if (keys.length > 0) target[keys[index % keys.length]!] = replacement;
        checkPaths(copy);
      }),
      { numRuns: 200 },
    );
  });

  it('generated valid policies validate, and validated content expands like the original', () => {
    fc.assert(
      fc.property(policyArb, (policy) => {
        const validated = validateContent(policy);
        const expanded = expandPolicy(policy, { policyName: 'p' });
        expect(validated.ok).toBe(expanded.ok);
        if (validated.ok && expanded.ok) {
          expect(expandPolicy(validated.content, { policyName: 'p' })).toEqual(expanded);
        }
      }),
      { numRuns: 200 },
    );
  });
});

describe('expansion properties', () => {
  it('output is independent of the input order of roles, grants, memberships, bindings and defaults', () => {
    fc.assert(
      fc.property(policyArb, fc.integer(), (policy, seed) => {
        const reordered: PolicyContent = {
          ...policy,
          roles: shuffle(policy.roles, seed),
          grants: shuffle(policy.grants, seed + 1),
          memberships: shuffle(policy.memberships, seed + 2),
          schemas: shuffle(policy.schemas, seed + 3),
          default_privileges: shuffle(policy.default_privileges, seed + 4),
        };
        const a = expandPolicy(policy, { policyName: 'p' });
        const b = expandPolicy(reordered, { policyName: 'p' });
        expect(b.ok).toBe(a.ok);
        if (a.ok) expect(b).toEqual(a);
      }),
      { numRuns: 200 },
    );
  });

  it('every expanded role name is 1..63 UTF-8 bytes and lists are de-duplicated', () => {
    fc.assert(
      fc.property(policyArb, (policy) => {
        const result = expandPolicy(policy, { policyName: 'p' });
        if (!result.ok) return;
        const roles = result.desired.roles.map((r) => r.name);
        expect(new Set(roles).size).toBe(roles.length);
        for (const name of roles) expect(Buffer.byteLength(name, 'utf8')).toBeLessThanOrEqual(63);
        const keys = result.desired.grants.map((g) =>
          JSON.stringify([g.grantee, g.object_type, g.schema, g.name]),
        );
        expect(new Set(keys).size).toBe(keys.length);
      }),
      { numRuns: 200 },
    );
  });
});
