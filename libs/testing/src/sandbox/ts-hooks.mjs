// Module hooks that let a test's child process run the TypeScript sources directly (no build step):
// @rolepolicy/<lib> aliases resolve to libs/<lib>/src/index.ts, `./x.js` to `./x.ts`, and .ts compiles with swc.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import swc from '@swc/core';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');
const alias = /^@rolepolicy\/([a-z-]+)$/;

export async function resolve(specifier, context, nextResolve) {
  const match = alias.exec(specifier);
  if (match) {
    return {
      url: pathToFileURL(path.join(repoRoot, 'libs', match[1], 'src', 'index.ts')).href,
      shortCircuit: true,
    };
  }
  const parent = context.parentURL;
  if (parent?.endsWith('.ts') && specifier.startsWith('.') && specifier.endsWith('.js')) {
    const candidate = path.resolve(path.dirname(fileURLToPath(parent)), specifier.replace(/\.js$/, '.ts'));
    if (existsSync(candidate)) return { url: pathToFileURL(candidate).href, shortCircuit: true };
  }
  return nextResolve(specifier, context);
}

export async function load(url, context, nextLoad) {
  if (!url.endsWith('.ts')) return nextLoad(url, context);
  const filename = fileURLToPath(url);
  const { code } = swc.transformSync(readFileSync(filename, 'utf8'), {
    filename,
    jsc: {
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true },
      target: 'es2022',
      keepClassNames: true,
    },
    module: { type: 'es6' },
    sourceMaps: 'inline',
  });
  return { format: 'module', source: code, shortCircuit: true };
}
