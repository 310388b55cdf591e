// Function names with argument names: the lookup text to_regprocedure gets is types only, so a grant on
// `f(a integer, b text)` resolves instead of failing the whole inspection with a syntax error.

import { argumentListStart, typesOnlyArguments } from './function-signature.js';
import { signatureLookup } from './inspect.js';

describe('typesOnlyArguments', () => {
  it('keeps a types-only list as it is', () => {
    expect(typesOnlyArguments('integer, text')).toBe('integer, text');
    expect(typesOnlyArguments('')).toBe('');
  });

  it('drops argument names, including quoted ones', () => {
    expect(typesOnlyArguments('a integer, b text')).toBe('integer, text');
    expect(typesOnlyArguments('"my arg" integer')).toBe('integer');
  });

  it('keeps multi-word and parameterised types whole', () => {
    expect(typesOnlyArguments('double precision, timestamp with time zone')).toBe(
      'double precision, timestamp with time zone',
    );
    expect(typesOnlyArguments('amount numeric(10, 2), d character varying')).toBe(
      'numeric(10, 2), character varying',
    );
    expect(typesOnlyArguments('ids integer[], x public.mood')).toBe('integer[], public.mood');
  });

  it('drops modes and OUT arguments, which are not part of the signature', () => {
    expect(typesOnlyArguments('IN p_id integer, OUT x text, VARIADIC v text[]')).toBe('integer, text[]');
  });
});

describe('signatureLookup', () => {
  it('builds the quoted lookup with argument names removed', () => {
    expect(signatureLookup('app', 'f(a integer, b text)').lookup).toBe('"app"."f"(integer, text)');
  });
});

describe('argumentListStart', () => {
  it('finds the list matching the final parenthesis, past parentheses in the name or the types', () => {
    expect(argumentListStart('f(amount numeric(10, 2))')).toBe(1);
    expect(argumentListStart('a(b(integer)')).toBe(3);
    expect(argumentListStart('plain')).toBe(-1);
  });
});
