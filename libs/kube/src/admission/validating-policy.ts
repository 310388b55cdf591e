// ValidatingAdmissionPolicy evaluation as the API server's dispatcher does it, without any server: for
// each binding whose policy matches the request (policy matchConstraints, then binding matchResources),
// resolve params (paramRef by name or selector; parameterNotFoundAction), evaluate matchConditions,
// variables and validations in the policy CEL environment, honour failurePolicy for errors, and turn
// failures into the binding's validationActions: Deny (the first one denies the request), Warn (a
// warning), Audit (reported back; the emulator has no audit log).
import { compile } from './policy-cel.js';
import {
  applicableBindings,
  errorText,
  policyContext,
  requestContext,
  resolveParams,
  type PolicyRequestInput,
} from './policy-context.js';
import type {
  PolicyValidation,
  ValidatingAdmissionPolicy,
  ValidatingAdmissionPolicyBinding,
} from './policy-types.js';

export type { ParamLookup } from './policy-context.js';

/** Everything one admission request is judged with. */
export type PolicyEvaluationInput = PolicyRequestInput & {
  readonly policies: readonly ValidatingAdmissionPolicy[];
  readonly bindings: readonly ValidatingAdmissionPolicyBinding[];
};

/** A request refused by a policy: the Status the API server answers is built from it. */
export type PolicyDenial = {
  readonly policy: string;
  readonly binding: string;
  /** `ValidatingAdmissionPolicy '<p>' with binding '<b>' denied request: <message>`. */
  readonly message: string;
  /** The validation's reason (default `Invalid`) and its HTTP code. */
  readonly reason: string;
  readonly code: number;
};

/** The outcome: the first denial (if any), warnings for the `Warning` header, audit-only failures. */
export type PolicyVerdict = {
  readonly denial?: PolicyDenial;
  readonly warnings: readonly string[];
  readonly audit: readonly string[];
};

const CODES: Readonly<Record<string, number>> = {
  Unauthorized: 401,
  Forbidden: 403,
  Invalid: 422,
  RequestEntityTooLarge: 413,
};

type Failure = { readonly message: string; readonly reason: string };

function failureMessage(v: PolicyValidation, context: Record<string, unknown>): string {
  if (v.messageExpression !== undefined) {
    try {
      const m = compile(v.messageExpression)(context);
      if (typeof m === 'string' && m.trim() !== '' && !m.includes('\n')) return m;
    } catch {
      // Upstream logs the error and falls back to message.
    }
  }
  return v.message ?? `failed expression: ${v.expression}`;
}

/** Evaluates one policy with one param object; returns its failures (empty when admitted or not applicable). */
function evaluatePolicy(
  policy: ValidatingAdmissionPolicy,
  base: Record<string, unknown>,
  params: Record<string, unknown> | null,
  fail: boolean,
): Failure[] {
  const context = policyContext(policy, base, params);
  if (context === 'skip') return [];
  if ('error' in context) return fail ? [{ message: String(context['error']), reason: 'Invalid' }] : [];
  const failures: Failure[] = [];
  for (const v of policy.spec.validations ?? []) {
    let result: unknown;
    try {
      result = compile(v.expression)(context);
    } catch (e) {
      if (fail)
        failures.push({
          message: `expression '${v.expression}' resulted in error: ${errorText(e)}`,
          reason: 'Invalid',
        });
      continue;
    }
    if (result !== true)
      failures.push({ message: failureMessage(v, context), reason: v.reason ?? 'Invalid' });
  }
  return failures;
}

/** Judges one admission request against every ValidatingAdmissionPolicy and binding. */
export function evaluateValidatingPolicies(input: PolicyEvaluationInput): PolicyVerdict {
  const warnings: string[] = [];
  const audit: string[] = [];
  const base = requestContext(input);
  for (const { policy, binding } of applicableBindings(input.policies, input.bindings, input)) {
    const fail = (policy.spec.failurePolicy ?? 'Fail') === 'Fail';
    const params = resolveParams(policy, binding, input);
    const failures: Failure[] =
      typeof params === 'string'
        ? fail
          ? [{ message: params, reason: 'Invalid' }]
          : []
        : params.flatMap((p) => evaluatePolicy(policy, base, p, fail));
    const actions = binding.spec.validationActions ?? ['Deny'];
    const p = policy.metadata.name;
    const b = binding.metadata.name;
    for (const f of failures) {
      if (actions.includes('Warn'))
        warnings.push(
          `Validation failed for ValidatingAdmissionPolicy '${p}' with binding '${b}': ${f.message}`,
        );
      if (actions.includes('Audit')) audit.push(`${p}/${b}: ${f.message}`);
      if (actions.includes('Deny')) {
        const message = `ValidatingAdmissionPolicy '${p}' with binding '${b}' denied request: ${f.message}`;
        const reason = f.reason || 'Invalid';
        return {
          denial: { policy: p, binding: b, message, reason, code: CODES[reason] ?? 422 },
          warnings,
          audit,
        };
      }
    }
  }
  return { warnings, audit };
}
