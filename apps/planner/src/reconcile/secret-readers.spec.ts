// A Secret change wakes exactly the policies the walk over every followed policy woke (the oracle,
// test-support/every-policy-secrets.ts), after any passes, forgets and Secret changes.
import fc from 'fast-check';
import { SecretReaders } from './secret-readers.js';
import { EveryPolicySecrets } from './test-support/every-policy-secrets.js';

// 'a' and 'a-b': a namespace that starts like another must not share its Secrets.
const NAMESPACES = ['a', 'a-b'] as const;
const POLICIES = ['p1', 'p2', 'p3'] as const;
const SECRETS = ['s1', 's2', 's3'] as const;
const VERSIONS = ['', '1', '2'] as const;

/** The reconciler's use: it follows, forgets, records a followed policy's pass, and asks on a Secret change. */
class Followed {
  readonly keys = new Set<string>();
  readonly readers = new SecretReaders();
  readonly oracle = new EveryPolicySecrets();

  follow(key: string): void {
    this.keys.add(key);
    this.oracle.follow(key);
  }

  forget(key: string): void {
    this.keys.delete(key);
    this.readers.forget(key);
    this.oracle.forget(key);
  }

  pass(key: string, versions: ReadonlyMap<string, string>): void {
    if (!this.keys.has(key)) return; // the reconciler records a pass only while its policy is followed
    this.readers.read(key, key.slice(0, key.lastIndexOf('/')), versions);
    this.oracle.read(key, versions);
  }
}

const sorted = (keys: readonly string[]): string[] => [...keys].sort();

describe('SecretReaders', () => {
  test('wakes the readers of another version, in the Secret namespace only, until forgotten', () => {
    const f = new Followed();
    for (const key of ['a/p1', 'a/p2', 'a-b/p1']) f.follow(key);
    f.pass('a/p1', new Map([['s1', '1']]));
    f.pass('a/p2', new Map([['s1', '2']]));
    f.pass('a-b/p1', new Map([['s1', '1']]));
    expect(f.readers.staleReaders('a', 's1', '2')).toEqual(['a/p1']);
    expect(f.readers.staleReaders('a', 's1', '')).toEqual(['a/p1', 'a/p2']);
    f.pass('a/p1', new Map([['s2', '']]));
    expect(f.readers.staleReaders('a', 's1', '3')).toEqual(['a/p2']);
    expect(f.readers.staleReaders('a', 's2', '1')).toEqual(['a/p1']);
    f.forget('a/p2');
    expect(f.readers.staleReaders('a', 's1', '3')).toEqual([]);
  });

  test('wakes what the walk over every followed policy woke, after any sequence of passes', () => {
    const key = fc
      .tuple(fc.constantFrom(...NAMESPACES), fc.constantFrom(...POLICIES))
      .map(([n, p]) => `${n}/${p}`);
    const op = fc.oneof(
      fc.record({ kind: fc.constant('follow' as const), key }),
      fc.record({ kind: fc.constant('forget' as const), key }),
      fc.record({
        kind: fc.constant('pass' as const),
        key,
        versions: fc.array(fc.tuple(fc.constantFrom(...SECRETS), fc.constantFrom(...VERSIONS)), {
          maxLength: 3,
        }),
      }),
      fc.record({
        kind: fc.constant('secret' as const),
        namespace: fc.constantFrom(...NAMESPACES),
        name: fc.constantFrom(...SECRETS),
        version: fc.constantFrom(...VERSIONS),
      }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 40 }), (ops) => {
        const f = new Followed();
        for (const o of ops) {
          if (o.kind === 'follow') f.follow(o.key);
          else if (o.kind === 'forget') f.forget(o.key);
          else if (o.kind === 'pass') f.pass(o.key, new Map(o.versions));
          else
            expect(sorted(f.readers.staleReaders(o.namespace, o.name, o.version))).toEqual(
              sorted(f.oracle.staleReaders(o.namespace, o.name, o.version)),
            );
        }
        for (const namespace of NAMESPACES)
          for (const name of SECRETS)
            for (const version of VERSIONS)
              expect(sorted(f.readers.staleReaders(namespace, name, version))).toEqual(
                sorted(f.oracle.staleReaders(namespace, name, version)),
              );
      }),
    );
  });
});
