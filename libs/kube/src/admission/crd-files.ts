// Reads CustomResourceDefinitions from YAML (deploy/crds), for callers that admit against the files on disk.
// The API emulator and the CLI load the checked-in manifests so tests exercise exactly what users apply.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { CustomResourceDefinition } from '../crds/crd-definitions.js';
import { isJsonObject } from './prune-defaults.js';

/** Parses every CustomResourceDefinition document in a YAML text. */
export function parseCrdYaml(text: string): CustomResourceDefinition[] {
  return parseAllDocuments(text)
    .map((d) => d.toJS() as unknown)
    .filter(
      (v): v is CustomResourceDefinition => isJsonObject(v) && v['kind'] === 'CustomResourceDefinition',
    );
}

/** Reads all `*.yaml` CRDs of a directory (sorted by file name). */
export function readCrdDirectory(dir: string): CustomResourceDefinition[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.yaml') || f.endsWith('.yml'))
    .sort()
    .flatMap((f) => parseCrdYaml(readFileSync(join(dir, f), 'utf8')));
}
