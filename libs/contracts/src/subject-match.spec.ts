// Subject routing rules: which handler pattern a concrete subject reaches and which consumers an app needs.
// NATS wildcard semantics: `*` is exactly one token, `>` one or more trailing tokens.
import { patternsOverlap, patternWithin, subjectMatches } from './subject-match.js';

describe('subjectMatches', () => {
  it.each([
    ['rp.execute.request', 'rp.execute.request', true],
    ['rp.execute.request', 'rp.execute.result', false],
    ['rp.resource.*.*.*', 'rp.resource.postgrespolicy.team-a.orders', true],
    ['rp.resource.*.*.*', 'rp.resource.postgrespolicy.team-a', false],
    ['rp.resource.>', 'rp.resource.secret.ns.name', true],
    ['rp.resource.>', 'rp.resource', false],
    ['rp.*', 'rp.a.b', false],
  ])('%s matches %s: %s', (pattern, subject, expected) => {
    expect(subjectMatches(pattern, subject)).toBe(expected);
  });
});

describe('patternWithin', () => {
  it.each([
    ['rp.execute.request', 'rp.execute.>', true],
    ['rp.resource.*.*.*', 'rp.resource.>', true],
    ['rp.resource.>', 'rp.resource.*.*.*', false],
    ['rp.k8s.cmd.*', 'rp.k8s.cmd.patch-status', false],
  ])('%s within %s: %s', (inner, outer, expected) => {
    expect(patternWithin(inner, outer)).toBe(expected);
  });
});

describe('patternsOverlap', () => {
  it.each([
    ['rp.resource.postgrespolicy.*.*', 'rp.resource.>', true],
    ['rp.>', 'rp.execute.request', true],
    ['rp.execute.request', 'rp.k8s.cmd.>', false],
    ['rp.a.*', 'rp.*.b', true],
    ['rp.a', 'rp.a.>', false],
    ['rp.a.b', 'rp.a', false],
  ])('%s overlaps %s: %s', (a, b, expected) => {
    expect(patternsOverlap(a, b)).toBe(expected);
    expect(patternsOverlap(b, a)).toBe(expected);
  });
});
