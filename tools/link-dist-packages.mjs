// Run by `npm run build` after tsc: makes each library importable from dist/ as the package
// `@rolepolicy/<lib>` (dist/node_modules/@rolepolicy/<lib>, re-exporting dist/libs/<lib>/src/index.js), so
// compiled code resolves the aliases with Node's own resolution and needs no resolve hook. A hook runs in a
// worker thread that every import of every module crosses, which doubled the CLI's start-up (docs/cli.md,
// "Startup"). tools/register-aliases.mjs keeps working for everything still started with it.
import { mkdirSync, readdirSync, existsSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const scope = path.join(root, 'dist', 'node_modules', '@rolepolicy');

rmSync(scope, { recursive: true, force: true });
for (const lib of readdirSync(path.join(root, 'libs')).sort()) {
  if (!existsSync(path.join(root, 'dist', 'libs', lib, 'src', 'index.js'))) continue;
  const dir = path.join(scope, lib);
  mkdirSync(dir, { recursive: true });
  const manifest = { name: `@rolepolicy/${lib}`, private: true, type: 'module', exports: './index.js' };
  writeFileSync(path.join(dir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  writeFileSync(path.join(dir, 'index.js'), `export * from '../../../libs/${lib}/src/index.js';\n`);
}
