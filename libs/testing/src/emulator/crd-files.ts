// Reads CustomResourceDefinitions from YAML/JSON manifests (deploy/crds), the same documents a user
// would `kubectl apply -f`, so the emulator serves exactly what the project ships.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { KubeObject } from './types.js';

/** Every CustomResourceDefinition in the manifests of `dir` (files sorted by name). */
export async function readCrdManifests(dir: string): Promise<KubeObject[]> {
  const files = (await readdir(dir)).filter((f) => /\.(ya?ml|json)$/.test(f)).sort();
  const crds: KubeObject[] = [];
  for (const file of files) {
    const text = await readFile(join(dir, file), 'utf8');
    for (const doc of parseAllDocuments(text)) {
      if (doc.errors.length > 0) throw new Error(`${file}: ${doc.errors[0]!.message}`);
      const value = doc.toJS() as KubeObject | null;
      if (value && value.kind === 'CustomResourceDefinition') crds.push(value);
    }
  }
  return crds;
}
