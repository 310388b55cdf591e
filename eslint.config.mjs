// Lint rules: typescript-eslint recommended, with `any` banned outside tests, no app reaching into another
// app's source (shared code lives in libs/), and a size limit on production files and functions (issue 29).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const APPS = ['access-scheduler', 'cli', 'executor', 'inspector', 'k8s-gateway', 'planner'];

/**
 * One app's source may import libs (`@rolepolicy/<lib>`) and its own files, never another app's: what two
 * services share is a library. Exceptions, by where the rule is not applied: tests (integration tests boot
 * the services they talk to), and tools/, bench/ and e2e/, which wire the apps together (stack, demo,
 * operations reference).
 */
function appBoundaries() {
  const others = (app) => APPS.filter((a) => a !== app).join('|');
  return [
    ...APPS.map((app) => ({
      files: [`apps/${app}/**/*.ts`],
      rules: {
        'no-restricted-imports': [
          'error',
          {
            patterns: [
              {
                regex: `^(\\.\\./)+(apps/)?(${others(app)})/`,
                message: `apps/${app} may not import another app's source; move the shared code into libs/.`,
              },
            ],
          },
        ],
      },
    })),
    {
      files: ['libs/**/*.ts'],
      rules: {
        'no-restricted-imports': [
          'error',
          {
            patterns: [
              {
                regex: `^(\\.\\./)+(apps/)?(${APPS.join('|')})/`,
                message: 'a library may not import an app; apps depend on libs, never the other way.',
              },
            ],
          },
        ],
      },
    },
  ];
}

// Size: a production file holds one concept (at most 500 lines) and a function one step (at most 100
// lines), counted as `wc -l` counts them, comments and blank lines included. Applied to the source under
// apps/ and libs/ that ships in a service or the CLI. Not applied to:
// - tests (`*.spec.ts`, `*.int-spec.ts`): a `describe` is a table of cases read top to bottom, and splitting
//   it by size would scatter the spec it mirrors;
// - test support: `**/test-support/**` (fixtures, random-policy generators, harnesses), `libs/testing`
//   (the Kubernetes API emulator and per-test sandboxes: they stand in for servers in tests and the local
//   stack, never run in a deployed service) and `libs/kube/src/conformance/conformance-cases.ts` (a data
//   table of admission cases that the conformance tests run against the emulator and a real API);
// - generated files: there is no generated TypeScript today (the CRDs and the operations reference are
//   generated as YAML and Markdown); one that appears is listed in SIZE_EXEMPT with the generator named;
// - tools/, bench/ and e2e/: scripts that wire the apps together for demos, benchmarks and end-to-end runs.
const SIZE_EXEMPT = [
  '**/*.spec.ts',
  '**/*.int-spec.ts',
  '**/test-support/**',
  'libs/testing/**',
  'libs/kube/src/conformance/conformance-cases.ts',
];

function sizeLimits() {
  return [
    {
      files: ['apps/**/*.ts', 'libs/**/*.ts'],
      ignores: SIZE_EXEMPT,
      rules: {
        'max-lines': ['error', { max: 500, skipBlankLines: false, skipComments: false }],
        'max-lines-per-function': ['error', { max: 100, skipBlankLines: false, skipComments: false }],
      },
    },
  ];
}

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', 'bench/results/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        Buffer: 'readonly',
        URL: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        AbortController: 'readonly',
        TextEncoder: 'readonly',
        TextDecoder: 'readonly',
        structuredClone: 'readonly',
        queueMicrotask: 'readonly',
        performance: 'readonly',
        fetch: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  ...appBoundaries(),
  ...sizeLimits(),
  {
    files: ['**/*.spec.ts', '**/*.int-spec.ts', 'libs/testing/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off', '@typescript-eslint/no-non-null-assertion': 'off' },
  },
  {
    files: ['**/*.spec.ts', '**/*.int-spec.ts', '**/test-support/**'],
    rules: { 'no-restricted-imports': 'off' },
  },
);
