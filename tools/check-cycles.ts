// `npm run check:cycles`: lists every import cycle among the TypeScript files of apps/, libs/, tools/, bench/
// and e2e/ (tsconfig.json's "include") and exits 1 when there is one. CI runs it (.ci/run).
import path from 'node:path';
import ts from 'typescript';
import { findCycles, importGraph } from './import-cycles.js';

const root = process.cwd();
const configFile = ts.readConfigFile(path.join(root, 'tsconfig.json'), ts.sys.readFile);
if (configFile.error !== undefined)
  throw new Error(ts.flattenDiagnosticMessageText(configFile.error.messageText, '\n'));
const parsed = ts.parseJsonConfigFileContent(configFile.config, ts.sys, root);
const files = parsed.fileNames.filter((f) => !f.includes('/node_modules/') && !f.includes('/dist/'));
const cycles = findCycles(importGraph(files, parsed.options, ts.sys));
const shown = (f: string): string => path.relative(root, f);
if (cycles.length === 0) {
  console.log(`no import cycles among ${files.length} files`);
} else {
  console.error(`${cycles.length} import cycle(s):`);
  for (const cycle of cycles) console.error(`  ${cycle.map(shown).join(' -> ')}`);
  process.exitCode = 1;
}
