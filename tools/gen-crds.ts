// Writes deploy/crds/*.yaml from the TypeBox sources in libs/kube/src/crds (run: npm run gen:crds).
// Output goes through prettier so `npm run lint` accepts it; libs/kube's crd-files spec fails when it is stale.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { format, resolveConfig } from 'prettier';
import { buildCrd, crdFileName, KINDS, renderCrdYaml } from '@rolepolicy/kube';

const outDir = join(process.cwd(), 'deploy', 'crds');
mkdirSync(outDir, { recursive: true });
for (const kind of KINDS) {
  const file = join(outDir, crdFileName(kind));
  const options = (await resolveConfig(file)) ?? {};
  writeFileSync(file, await format(renderCrdYaml(buildCrd(kind)), { ...options, parser: 'yaml' }));
  console.log(`wrote ${file}`);
}
