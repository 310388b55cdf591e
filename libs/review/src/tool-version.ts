// The `tool_version` of a review artifact: the version in the repository's package.json. The one file read in
// this library; the CLI and the planner both stamp artifacts with it, so it lives beside the artifact builder.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The version in the repository's package.json (found by walking up from this file). */
export function toolVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 8; i++) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
        name?: string;
        version?: string;
      };
      if (pkg.name === 'rolepolicy' && typeof pkg.version === 'string') return pkg.version;
    } catch {
      // not here; keep walking up
    }
    dir = dirname(dir);
  }
  return 'unknown';
}
