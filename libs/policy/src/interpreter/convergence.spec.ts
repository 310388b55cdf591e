// Property tests with the interpreter (engine notes 7.1): for random policies and random live states,
// one apply converges, plans are deterministic and order-independent, additive never removes, absences hold.

import fc from 'fast-check';
import { desiredArb, snapshotArb } from '../diff/test-support/generators.js';
import { planInput } from '../diff/test-support/builders.js';
import { grantKeyId, grantPrefixId, WILDCARD } from '../diff/keys.js';
import type { DesiredState } from '../model/desired.js';
import type { CatalogSnapshot } from '../model/snapshot.js';
import type { GrantEntry } from '../model/state.js';
import { computePlan, type PlanResult } from '../plan/compute-plan.js';
import { applyChanges } from './apply-changes.js';

const RUNS = { numRuns: 400 };

function plan(
  desired: DesiredState,
  snapshot: CatalogSnapshot,
  applied: Record<string, string> = {},
): PlanResult {
  const passwordSources: Record<string, string> = {};
  for (const r of desired.roles) if (r.password !== null) passwordSources[r.name] = `pw:${r.name}:1`;
  return computePlan(
    planInput(desired, snapshot, { passwordSources, appliedPasswordSourceVersions: applied }),
  );
}

/** What the operator records after a successful apply: the source version of every password it set. */
function appliedAfter(result: PlanResult): Record<string, string> {
  const applied: Record<string, string> = {};
  for (const c of result.changes) if (c.kind === 'set_password') applied[c.name] = c.password_source;
  return applied;
}

function holds(snapshot: CatalogSnapshot, key: Omit<GrantEntry, 'privileges'>, privilege: string): boolean {
  return snapshot.grants.some(
    (g) => grantKeyId(g) === grantKeyId(key) && g.privileges.some((p) => p === privilege),
  );
}

/**
 * True when every object the policy names (tables, sequences, functions, types) exists in the snapshot.
 * A named grant on an object that does not exist fails at apply (a schema created by the plan is empty),
 * so such inputs are outside the convergence contract.
 */
function namedObjectsExist(desired: DesiredState, snapshot: CatalogSnapshot): boolean {
  const identity = (g: GrantEntry): string | null =>
    snapshot.function_signatures.find((f) => f.schema === g.schema && f.declared === g.name)?.identity ??
    g.name;
  return [...desired.grants, ...desired.grant_absences].every(
    (g) =>
      g.name === WILDCARD ||
      g.schema === null ||
      g.object_type === 'schema' ||
      g.object_type === 'database' ||
      snapshot.inventory.some(
        (o) => o.kind === g.object_type && o.schema === g.schema && o.name === identity(g),
      ),
  );
}

/** Deterministic shuffle for the order-independence property (test-only randomness via the seed). */
function shuffle<T>(items: readonly T[], seed: number): T[] {
  const out = [...items];
  let s = seed >>> 0 || 1;
  for (let i = out.length - 1; i > 0; i--) {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    const j = s % (i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/**
 * Out-of-band drift on a converged state: drops the first privilege of some grant rows (per `cuts`) and
 * adds `noise`'s grant rows for grantees that exist (never on a schema to its own owner), with their objects
 * in the inventory as the catalog reports them.
 */
function drift(state: CatalogSnapshot, noise: CatalogSnapshot, cuts: readonly number[]): CatalogSnapshot {
  const kept: GrantEntry[] = [];
  state.grants.forEach((g, i) => {
    if (cuts[i % Math.max(cuts.length, 1)] !== 0) kept.push(g);
    else if (g.privileges.length > 1) kept.push({ ...g, privileges: g.privileges.slice(1) });
  });
  const exists = new Set([...state.roles.map((r) => r.name), 'PUBLIC']);
  const added = noise.grants.filter(
    (g) =>
      exists.has(g.grantee) &&
      (g.object_type !== 'schema' || state.schemas.some((s) => s.name === g.name && s.owner !== g.grantee)),
  );
  const schemas = new Set(state.schemas.map((s) => s.name));
  const seen = new Set(state.inventory.map((o) => JSON.stringify(o)));
  const inventory = [
    ...state.inventory,
    ...noise.inventory.filter((o) => schemas.has(o.schema) && !seen.has(JSON.stringify(o))),
  ];
  const visible = added.filter(
    (g) =>
      g.schema === null ||
      g.object_type === 'schema' ||
      g.object_type === 'database' ||
      schemas.has(g.schema),
  );
  return { ...state, grants: [...kept, ...visible], inventory };
}

describe('convergence properties (interpreter as oracle)', () => {
  it('applying the plan yields a state whose plan is empty (a second plan after apply is empty)', () => {
    fc.assert(
      fc.property(desiredArb, snapshotArb, (desired, snapshot) => {
        fc.pre(namedObjectsExist(desired, snapshot));
        const first = plan(desired, snapshot);
        fc.pre(first.blockers.length === 0);
        const after = applyChanges(snapshot, first.changes);
        const second = plan(desired, after, appliedAfter(first));
        expect(second.changes).toEqual([]);
      }),
      RUNS,
    );
  });

  it('converges from a drifted copy of a converged state (privileges removed and added out of band)', () => {
    fc.assert(
      fc.property(
        desiredArb,
        snapshotArb,
        snapshotArb,
        fc.array(fc.nat(3), { maxLength: 16 }),
        (desired, base, noise, cuts) => {
          fc.pre(namedObjectsExist(desired, base));
          const converged = applyChanges(base, plan(desired, base).changes);
          const drifted = drift(converged, noise, cuts);
          const first = plan(desired, drifted);
          fc.pre(first.blockers.length === 0);
          const second = plan(desired, applyChanges(drifted, first.changes), appliedAfter(first));
          expect(second.changes).toEqual([]);
        },
      ),
      RUNS,
    );
  });

  it('plans are deterministic: the same input gives byte-identical output', () => {
    fc.assert(
      fc.property(desiredArb, snapshotArb, (desired, snapshot) => {
        expect(JSON.stringify(plan(desired, snapshot))).toBe(JSON.stringify(plan(desired, snapshot)));
      }),
      { numRuns: 100 },
    );
  });

  it('plans are independent of input array order', () => {
    fc.assert(
      fc.property(desiredArb, snapshotArb, fc.integer(), (desired, snapshot, seed) => {
        const shuffledDesired: DesiredState = {
          ...desired,
          roles: shuffle(desired.roles, seed),
          schemas: shuffle(desired.schemas, seed + 1),
          grants: shuffle(desired.grants, seed + 2),
          grant_absences: shuffle(desired.grant_absences, seed + 3),
          default_privileges: shuffle(desired.default_privileges, seed + 4),
          default_privilege_absences: shuffle(desired.default_privilege_absences, seed + 5),
          memberships: shuffle(desired.memberships, seed + 6),
          exclusive_membership_roles: shuffle(desired.exclusive_membership_roles, seed + 7),
        };
        const shuffledSnapshot: CatalogSnapshot = {
          ...snapshot,
          roles: shuffle(snapshot.roles, seed + 8),
          schemas: shuffle(snapshot.schemas, seed + 9),
          grants: shuffle(snapshot.grants, seed + 10),
          default_privileges: shuffle(snapshot.default_privileges, seed + 11),
          memberships: shuffle(snapshot.memberships, seed + 12),
          inventory: shuffle(snapshot.inventory, seed + 13),
          existing_roles: shuffle(snapshot.existing_roles, seed + 14),
        };
        expect(JSON.stringify(plan(shuffledDesired, shuffledSnapshot))).toBe(
          JSON.stringify(plan(desired, snapshot)),
        );
      }),
      { numRuns: 200 },
    );
  });

  it('additive never removes a privilege, a default privilege, a membership, a role or a schema', () => {
    fc.assert(
      fc.property(desiredArb, snapshotArb, (desired, snapshot) => {
        const additive = { ...desired, reconciliation_mode: 'additive' as const };
        const after = applyChanges(snapshot, plan(additive, snapshot).changes);
        for (const g of snapshot.grants) for (const p of g.privileges) expect(holds(after, g, p)).toBe(true);
        for (const d of snapshot.default_privileges) {
          const kept = after.default_privileges.find(
            (x) =>
              JSON.stringify([x.owner, x.scope, x.on_type, x.grantee]) ===
              JSON.stringify([d.owner, d.scope, d.on_type, d.grantee]),
          );
          expect(kept?.privileges).toEqual(expect.arrayContaining([...d.privileges]));
        }
        for (const m of snapshot.memberships) {
          expect(after.memberships.some((x) => x.role === m.role && x.member === m.member)).toBe(true);
        }
        expect(after.roles.map((r) => r.name)).toEqual(
          expect.arrayContaining(snapshot.roles.map((r) => r.name)),
        );
        for (const s of snapshot.schemas) {
          const kept = after.schemas.find((x) => x.name === s.name);
          expect(kept?.owner).toBe(s.owner);
          expect(kept?.owner_privileges).toEqual(expect.arrayContaining([...s.owner_privileges]));
        }
      }),
      RUNS,
    );
  });

  it('absence assertions hold after apply, present grants stay, and unmentioned PUBLIC survives', () => {
    fc.assert(
      fc.property(
        desiredArb,
        snapshotArb,
        fc.constantFrom('authoritative', 'adopt'),
        (desired, snapshot, mode) => {
          const policy = { ...desired, reconciliation_mode: mode } as DesiredState;
          const result = plan(policy, snapshot);
          fc.pre(result.blockers.length === 0);
          const after = applyChanges(snapshot, result.changes);
          const live = (g: Omit<GrantEntry, 'privileges'>): Omit<GrantEntry, 'privileges'> =>
            g.object_type === 'function' && g.name === 'f(integer)' ? { ...g, name: 'f(p integer)' } : g;
          for (const a of policy.grant_absences) {
            for (const p of a.privileges) {
              const violating = after.grants.filter((g) =>
                a.name === WILDCARD
                  ? grantPrefixId(g) === grantPrefixId(a) && g.privileges.includes(p)
                  : grantKeyId(g) === grantKeyId(live(a)) && g.privileges.includes(p),
              );
              expect(violating).toEqual([]);
            }
          }
          for (const d of policy.default_privilege_absences) {
            const row = after.default_privileges.find(
              (x) =>
                JSON.stringify([x.owner, x.scope, x.on_type, x.grantee]) ===
                JSON.stringify([d.owner, d.scope, d.on_type, d.grantee]),
            );
            for (const p of d.privileges) expect(row?.privileges ?? []).not.toContain(p);
          }
          for (const g of policy.grants) {
            if (g.name === WILDCARD) continue;
            const owner =
              g.object_type === 'schema'
                ? after.schemas.find((s) => s.name === g.name && s.owner === g.grantee)
                : undefined;
            for (const p of g.privileges)
              expect(holds(after, live(g), p) || owner?.owner_privileges.includes(p) === true).toBe(true);
          }
          const publicAbsent = (row: GrantEntry, p: string): boolean =>
            policy.grant_absences.some(
              (a) =>
                a.grantee === 'PUBLIC' &&
                a.privileges.some((x) => x === p) &&
                (a.name === WILDCARD
                  ? grantPrefixId(a) === grantPrefixId(row)
                  : grantKeyId(live(a)) === grantKeyId(row)),
            );
          for (const row of snapshot.grants.filter((g) => g.grantee === 'PUBLIC')) {
            for (const p of row.privileges)
              if (!publicAbsent(row, p)) expect(holds(after, row, p)).toBe(true);
          }
        },
      ),
      RUNS,
    );
  });
});
