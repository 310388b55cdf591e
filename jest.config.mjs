// Two projects: `unit` (pure code, no servers) and `integration` (real PostgreSQL, NATS, Redis).
// Native ESM mode: NestJS 12 and @kubernetes/client-node are ESM-only (see shared/design/stack-notes.md).
const swc = [
  '@swc/jest',
  {
    jsc: {
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true },
      target: 'es2022',
      keepClassNames: true,
    },
    module: { type: 'es6' },
    sourceMaps: 'inline',
  },
];

const common = {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  transform: { '^.+\\.ts$': swc },
  moduleNameMapper: {
    '^@rolepolicy/([a-z-]+)$': '<rootDir>/libs/$1/src/index.ts',
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  modulePathIgnorePatterns: ['<rootDir>/dist/'],
};

export default {
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/{apps,libs,tools,bench}/**/*.spec.ts'] },
    {
      ...common,
      displayName: 'integration',
      testMatch: ['<rootDir>/{apps,libs,tools,bench,e2e}/**/*.int-spec.ts'],
    },
  ],
  // Jest reads testTimeout only at the top level, not per project. Integration tests boot servers and
  // child processes on a 2-core machine; pure tests never come near this.
  testTimeout: 60000,
};
