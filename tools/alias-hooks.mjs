// Module-resolution hook registered by register-aliases.mjs (runs off the main thread).
import { pathToFileURL } from 'node:url';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const distRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'dist');
const alias = /^@rolepolicy\/([a-z-]+)$/;

export async function resolve(specifier, context, nextResolve) {
  const match = alias.exec(specifier);
  if (match) {
    const target = path.join(distRoot, 'libs', match[1], 'src', 'index.js');
    return nextResolve(pathToFileURL(target).href, context);
  }
  return nextResolve(specifier, context);
}
