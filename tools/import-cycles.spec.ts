// The import-cycle check: cycles through value and type-only imports are found and reported as paths, through
// tsconfig paths aliases too; an acyclic graph reports nothing.
import ts from 'typescript';
import { findCycles, importGraph, type SourceHost } from './import-cycles.js';

const options: ts.CompilerOptions = {
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  baseUrl: '/repo',
  paths: { '@x/lib': ['./libs/lib/src/index.ts'] },
};

function host(files: Record<string, string>): SourceHost {
  return { fileExists: (p) => p in files, readFile: (p) => files[p] };
}

function cyclesOf(files: Record<string, string>): string[][] {
  return findCycles(importGraph(Object.keys(files), options, host(files)));
}

describe('import cycles', () => {
  it('finds a cycle closed by a type-only import and reports it from its first file', () => {
    expect(
      cyclesOf({
        '/repo/a/lifecycle.ts': "import { recordPromotion } from './promotion.js';\nexport type Pass = {};",
        '/repo/a/promotion.ts':
          "import type { Pass } from './lifecycle.js';\nexport const recordPromotion = 1;",
        '/repo/a/other.ts': "import { recordPromotion } from './promotion.js';",
      }),
    ).toEqual([['/repo/a/lifecycle.ts', '/repo/a/promotion.ts', '/repo/a/lifecycle.ts']]);
  });

  it('follows tsconfig paths aliases and re-exports', () => {
    expect(
      cyclesOf({
        '/repo/libs/lib/src/index.ts': "export * from './a.js';",
        '/repo/libs/lib/src/a.ts': "import { b } from '@x/lib';\nexport const a = 1;",
      }),
    ).toEqual([['/repo/libs/lib/src/a.ts', '/repo/libs/lib/src/index.ts', '/repo/libs/lib/src/a.ts']]);
  });

  it('reports one shortest path per tangle of files, however many loops it has', () => {
    const cycles = cyclesOf({
      '/repo/a.ts': "import './b.js';",
      '/repo/b.ts': "import './c.js';\nimport './a.js';",
      '/repo/c.ts': "import './a.js';",
    });
    expect(cycles).toEqual([['/repo/a.ts', '/repo/b.ts', '/repo/a.ts']]);
  });

  it('an acyclic graph, with imports of packages and of files outside the set, has no cycle', () => {
    expect(
      cyclesOf({
        '/repo/a.ts': "import ts from 'typescript';\nimport { b } from './b.js';\nimport './missing.js';",
        '/repo/b.ts': "export const b = await import('./c.js');",
        '/repo/c.ts': 'export const c = 1;',
      }),
    ).toEqual([]);
  });
});
