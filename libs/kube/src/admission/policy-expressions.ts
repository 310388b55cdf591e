// Creation-time checks of admission policies, as the API server's validation of the policy kinds does
// them: every CEL expression must compile, or the object is refused with a field error naming it
// (`spec.validations[0].expression: Invalid value: "…": compilation failed: …`). With cel-js as the
// engine this is also where an expression outside its dialect is caught, at `kubectl apply`, not at
// the first request it should have judged.
import { rewriteStructs } from './cel-struct.js';
import { compile } from './policy-cel.js';
import type { FieldError } from './field-errors.js';

type Spec = {
  readonly matchConditions?: readonly { readonly expression?: unknown }[];
  readonly variables?: readonly { readonly expression?: unknown }[];
  readonly validations?: readonly { readonly expression?: unknown; readonly messageExpression?: unknown }[];
  readonly mutations?: readonly {
    readonly applyConfiguration?: { readonly expression?: unknown };
    readonly jsonPatch?: { readonly expression?: unknown };
  }[];
};

/** Field errors for the expressions of a ValidatingAdmissionPolicy or MutatingAdmissionPolicy that do not compile. */
export function policyExpressionErrors(kind: string, spec: unknown): FieldError[] {
  if (kind !== 'ValidatingAdmissionPolicy' && kind !== 'MutatingAdmissionPolicy') return [];
  const s = (spec ?? {}) as Spec;
  const errors: FieldError[] = [];
  const check = (field: string, expression: unknown, rewrite = false) => {
    if (typeof expression !== 'string') return;
    try {
      compile(rewrite ? rewriteStructs(expression) : expression);
    } catch (e) {
      const why = (e instanceof Error ? e.message : String(e)).split('\n')[0];
      errors.push({
        type: 'FieldValueInvalid',
        field,
        badValue: { kind: 'string', value: expression },
        detail: `compilation failed: ${why}`,
      });
    }
  };
  s.matchConditions?.forEach((c, i) => check(`spec.matchConditions[${i}].expression`, c.expression));
  s.variables?.forEach((v, i) => check(`spec.variables[${i}].expression`, v.expression));
  s.validations?.forEach((v, i) => {
    check(`spec.validations[${i}].expression`, v.expression);
    check(`spec.validations[${i}].messageExpression`, v.messageExpression);
  });
  s.mutations?.forEach((m, i) => {
    check(`spec.mutations[${i}].applyConfiguration.expression`, m.applyConfiguration?.expression, true);
    check(`spec.mutations[${i}].jsonPatch.expression`, m.jsonPatch?.expression, true);
  });
  return errors;
}
