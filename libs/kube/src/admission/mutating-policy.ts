// MutatingAdmissionPolicy evaluation (admissionregistration.k8s.io/v1beta1) without a server: each
// binding whose policy matches (as for validating policies) runs its policy's mutations in order on the
// object as mutated so far: `ApplyConfiguration` expressions return an `Object{…}` merged into the
// object (maps merged field by field, lists and scalars replaced: a simplification of server-side
// apply's merge), `JSONPatch` expressions return a list of `JSONPatch{op, path, value}` applied as RFC
// 6902. Errors and missing params follow failurePolicy.
import fastJsonPatch from 'fast-json-patch';
import { rewriteStructs } from './cel-struct.js';
import { celValue, compile } from './policy-cel.js';
import {
  applicableBindings,
  errorText,
  policyContext,
  requestContext,
  resolveParams,
  type PolicyRequestInput,
} from './policy-context.js';
import type {
  MutatingAdmissionPolicy,
  MutatingAdmissionPolicyBinding,
  PolicyMutation,
} from './policy-types.js';

type Json = Record<string, unknown>;

/** Everything one admission request is mutated with. */
export type MutationInput = PolicyRequestInput & {
  readonly policies: readonly MutatingAdmissionPolicy[];
  readonly bindings: readonly MutatingAdmissionPolicyBinding[];
};

/** The mutated object and which policies changed it, or why the request is refused. */
export type MutationResult = {
  readonly object: Json | null;
  /** `<policy>/<binding>` of each binding whose mutations ran. */
  readonly applied: readonly string[];
  /** `MutatingAdmissionPolicy '<p>' with binding '<b>' denied request: <why>` (failurePolicy Fail). */
  readonly denial?: string;
};

/** A CEL result as JSON: ints back to numbers, maps and lists copied. */
function toJson(v: unknown): unknown {
  if (typeof v === 'bigint') return Number(v);
  if (Array.isArray(v)) return v.map(toJson);
  if (typeof v === 'object' && v !== null) {
    const out: Json = {};
    for (const [k, x] of Object.entries(v)) out[k] = toJson(x);
    return out;
  }
  return v;
}

function isMap(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Merges an apply configuration into `target`: maps field by field, everything else replaced. */
function merge(target: unknown, patch: unknown): unknown {
  if (!isMap(target) || !isMap(patch)) return patch;
  const out: Json = { ...target };
  for (const [k, v] of Object.entries(patch)) out[k] = merge(target[k], v);
  return out;
}

function mutate(object: Json, mutation: PolicyMutation, context: Json): Json {
  if (mutation.patchType === 'ApplyConfiguration') {
    const expression = mutation.applyConfiguration?.expression ?? '';
    const value = toJson(compile(rewriteStructs(expression))(context));
    if (!isMap(value)) throw new Error('applyConfiguration must evaluate to an Object');
    return merge(object, value) as Json;
  }
  const expression = mutation.jsonPatch?.expression ?? '';
  const ops = toJson(compile(rewriteStructs(expression))(context));
  if (!Array.isArray(ops)) throw new Error('jsonPatch must evaluate to a list of JSONPatch');
  const copy = structuredClone(object);
  return fastJsonPatch.applyPatch(copy, ops as fastJsonPatch.Operation[], true, true).newDocument;
}

/** Runs every applicable MutatingAdmissionPolicy on the request's object. */
export function applyMutatingPolicies(input: MutationInput): MutationResult {
  let object = input.request.object;
  const applied: string[] = [];
  if (object === null) return { object, applied };
  for (const { policy, binding } of applicableBindings(input.policies, input.bindings, input)) {
    const fail = (policy.spec.failurePolicy ?? 'Fail') === 'Fail';
    const deny = (why: string) =>
      `MutatingAdmissionPolicy '${policy.metadata.name}' with binding '${binding.metadata.name}' denied request: ${why}`;
    const params = resolveParams(policy, binding, input);
    if (typeof params === 'string') {
      if (fail) return { object, applied, denial: deny(params) };
      continue;
    }
    for (const p of params) {
      // Each policy sees the object as the ones before it left it.
      const context = policyContext(policy, requestContext(input, object), p);
      if (context === 'skip') continue;
      if ('error' in context) {
        if (fail) return { object, applied, denial: deny(String(context['error'])) };
        continue;
      }
      try {
        let next: Json = object;
        for (const m of policy.spec.mutations ?? [])
          next = mutate(next, m, { ...context, object: celValue(next) });
        object = next;
        applied.push(`${policy.metadata.name}/${binding.metadata.name}`);
      } catch (e) {
        if (fail) return { object, applied, denial: deny(errorText(e)) };
      }
    }
  }
  return { object, applied };
}
