// Module hooks that let a test's child process run the TypeScript sources directly (no build step):
// @rolepolicy/<lib> aliases resolve to libs/<lib>/src/index.ts, `./x.js` to `./x.ts`, and .ts compiles with swc.
// Compiled output is cached on disk under the SHA-256 of everything that determines it (swc's version, the
// options, the file's path and its whole current text), so a child never runs anything but the current
// source: an edited file has a new key and compiles again. The cache only spares the next child the
// compilation (and loading swc at all when every file is cached); nothing else is remembered.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');
const alias = /^@rolepolicy\/([a-z-]+)$/;

const SWC_OPTIONS = {
  jsc: {
    parser: { syntax: 'typescript', decorators: true },
    transform: { legacyDecorator: true, decoratorMetadata: true },
    target: 'es2022',
    keepClassNames: true,
  },
  module: { type: 'es6' },
  sourceMaps: 'inline',
};
const require = createRequire(import.meta.url);
const swcVersion = JSON.parse(readFileSync(require.resolve('@swc/core/package.json'), 'utf8')).version;
const cacheDir = path.join(repoRoot, 'node_modules', '.cache', 'rolepolicy-ts-hooks');
const keyPrefix = `${swcVersion}\0${JSON.stringify(SWC_OPTIONS)}\0`;

/** @type {import('@swc/core') | undefined} */
let swc;

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

/** The compiled text of `source`, from the cache when this exact text of this file was compiled before. */
async function compile(filename, source) {
  const key = createHash('sha256')
    .update(keyPrefix)
    .update(filename)
    .update('\0')
    .update(source)
    .digest('hex');
  const cached = path.join(cacheDir, `${key}.js`);
  try {
    return readFileSync(cached, 'utf8');
  } catch {
    // Not compiled yet (or the cache is gone): compile below.
  }
  swc ??= (await import('@swc/core')).default;
  const { code } = swc.transformSync(source, { ...SWC_OPTIONS, filename });
  try {
    // Write then rename: a concurrent child reads either nothing or the whole file.
    mkdirSync(cacheDir, { recursive: true });
    const partial = `${cached}.${process.pid}.${Math.random().toString(36).slice(2)}`;
    writeFileSync(partial, code);
    renameSync(partial, cached);
  } catch {
    // A read-only or full disk only costs the next child the compilation.
  }
  return code;
}

export async function load(url, context, nextLoad) {
  if (!url.endsWith('.ts')) return nextLoad(url, context);
  const filename = fileURLToPath(url);
  const source = await compile(filename, readFileSync(filename, 'utf8'));
  return { format: 'module', source, shortCircuit: true };
}
