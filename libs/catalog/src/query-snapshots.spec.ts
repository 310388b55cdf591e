// The checked-in libs/catalog/queries/*.sql files must equal the SQL the repositories run today.
// Regenerate after a deliberate change with: UPDATE_QUERY_SNAPSHOTS=1 npx jest libs/catalog/src/query-snapshots.spec.ts

import { readFile, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';

import { renderQuerySnapshots } from './query-snapshots.js';

const QUERIES_DIR = path.resolve(process.cwd(), 'libs/catalog/queries');

describe('catalog query snapshots', () => {
  it('every repository query is checked in as SQL, unchanged', async () => {
    const rendered = await renderQuerySnapshots();
    if (process.env['UPDATE_QUERY_SNAPSHOTS'] === '1') {
      for (const [file, text] of Object.entries(rendered)) {
        await writeFile(path.join(QUERIES_DIR, `${file}.sql`), text);
      }
    }
    const files = (await readdir(QUERIES_DIR)).filter((name) => name.endsWith('.sql')).sort();
    expect(files).toEqual(
      Object.keys(rendered)
        .map((file) => `${file}.sql`)
        .sort(),
    );
    for (const [file, text] of Object.entries(rendered)) {
      expect(await readFile(path.join(QUERIES_DIR, `${file}.sql`), 'utf8')).toBe(text);
    }
  });

  it('every catalog filter binds one array parameter, never one value per object', async () => {
    const rendered = await renderQuerySnapshots();
    const all = Object.values(rendered).join('\n');
    expect(all).not.toMatch(/\bIN \(\$\d+, \$\d+/);
    expect(all).toMatch(/= ANY\(\$1::text\[\]\)/);
  });
});
