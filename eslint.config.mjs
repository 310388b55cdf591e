// Lint rules: typescript-eslint recommended, with `any` banned outside tests, and no app reaching into another
// app's source (shared code lives in libs/).
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
  {
    files: ['**/*.spec.ts', '**/*.int-spec.ts', 'libs/testing/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off', '@typescript-eslint/no-non-null-assertion': 'off' },
  },
  {
    files: ['**/*.spec.ts', '**/*.int-spec.ts', '**/test-support/**'],
    rules: { 'no-restricted-imports': 'off' },
  },
);
