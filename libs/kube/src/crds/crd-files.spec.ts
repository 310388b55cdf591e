// deploy/crds is generated from the TypeBox sources; these tests keep the two identical and structurally sound.
// When this fails after a schema change, run `npm run gen:crds` and commit the YAML.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { buildCrd, crdFileName, renderCrdYaml, type JsonSchema } from './crd-definitions.js';
import { KINDS, KIND_NAMES } from '../constants.js';
import { readCrdDirectory } from '../admission/crd-files.js';
import { compileCrd } from '../admission/admit.js';

const crdDir = join(process.cwd(), 'deploy', 'crds');

function walk(node: JsonSchema, path: string, visit: (n: JsonSchema, p: string) => void): void {
  visit(node, path);
  for (const [k, v] of Object.entries(node.properties ?? {})) walk(v, `${path}.${k}`, visit);
  if (typeof node.additionalProperties === 'object') walk(node.additionalProperties, `${path}[*]`, visit);
  if (node.items !== undefined) walk(node.items, `${path}[]`, visit);
}

describe('CRD manifests in deploy/crds', () => {
  it.each(KINDS)('%s: checked-in YAML equals the generated definition', (kind) => {
    const onDisk = readFileSync(join(crdDir, crdFileName(kind)), 'utf8');
    expect(onDisk.startsWith(renderCrdYaml(buildCrd(kind)).split('\n')[0] ?? '')).toBe(true);
    expect(parse(onDisk)).toEqual(buildCrd(kind));
  });

  it('declares the five kinds as namespaced rolepolicy.io/v1alpha1 resources with status subresource', () => {
    const crds = readCrdDirectory(crdDir);
    expect(crds.map((c) => c.spec.names.kind).sort()).toEqual([...KINDS].sort());
    for (const crd of crds) {
      expect(crd.spec.group).toBe('rolepolicy.io');
      expect(crd.spec.scope).toBe('Namespaced');
      expect(crd.metadata.name).toBe(`${crd.spec.names.plural}.rolepolicy.io`);
      const [version] = crd.spec.versions;
      expect(version?.name).toBe('v1alpha1');
      expect(version?.subresources).toEqual({ status: {} });
      expect(version?.additionalPrinterColumns?.some((c) => c.name === 'Age')).toBe(true);
      expect(crd.spec.names.shortNames?.length).toBeGreaterThan(0);
      expect(crd.spec.names.categories).toEqual(['rolepolicy']);
    }
    expect(KIND_NAMES.PostgresPolicy.plural).toBe('postgrespolicies');
  });

  it.each(KINDS)('%s: every CEL rule parses and every schema node is structural', (kind) => {
    const crd = buildCrd(kind);
    expect(() => compileCrd(crd)).not.toThrow();
    const root = crd.spec.versions[0]?.schema.openAPIV3Schema;
    if (root === undefined) throw new Error('no schema');
    walk(root, kind, (node, path) => {
      // Structural schemas: every node has a type; objects use properties or additionalProperties, never both.
      expect({ path, type: node.type }).toEqual({ path, type: expect.any(String) });
      expect({
        path,
        both: node.properties !== undefined && node.additionalProperties !== undefined,
      }).toEqual({
        path,
        both: false,
      });
      if (node['x-kubernetes-list-type'] === 'map') {
        for (const key of node['x-kubernetes-list-map-keys'] ?? []) {
          expect({ path, keyRequired: node.items?.required?.includes(key) }).toEqual({
            path,
            keyRequired: true,
          });
        }
      }
    });
  });

  it.each(KINDS)('%s: every list, map and string a CEL rule reads is bounded (cost estimation)', (kind) => {
    const root = buildCrd(kind).spec.versions[0]?.schema.openAPIV3Schema;
    if (root === undefined) throw new Error('no schema');
    const unbounded: string[] = [];
    const requireBounded = (node: JsonSchema, path: string): void =>
      walk(node, path, (inner, p) => {
        if (inner.type === 'array' && inner.maxItems === undefined) unbounded.push(p);
        if (inner.type === 'string' && inner.maxLength === undefined && inner.enum === undefined)
          unbounded.push(p);
        if (
          inner.type === 'object' &&
          inner.additionalProperties !== undefined &&
          inner.maxProperties === undefined
        )
          unbounded.push(p);
      });
    walk(root, kind, (node, path) => {
      for (const { rule } of node['x-kubernetes-validations'] ?? []) {
        // has() only tests presence; everything else a rule names is traversed or compared.
        const read = rule.replace(/has\((?:self|oldSelf)\.[A-Za-z_]+\)/g, 'true');
        if (/\b(?:self|oldSelf)\b(?!\.[A-Za-z_])/.test(read)) requireBounded(node, path);
        for (const m of read.matchAll(/\b(?:self|oldSelf)\.([A-Za-z_][A-Za-z0-9_]*)/g)) {
          const field = m[1] ?? '';
          const child = node.properties?.[field];
          if (child !== undefined) requireBounded(child, `${path}.${field}`);
        }
      }
    });
    expect(unbounded).toEqual([]);
  });

  it.each(KINDS)(
    '%s: every field a CEL rule names exists in the schema (the API server type-checks rules)',
    (kind) => {
      const root = buildCrd(kind).spec.versions[0]?.schema.openAPIV3Schema;
      if (root === undefined) throw new Error('no schema');
      const missing: string[] = [];
      walk(root, kind, (node, path) => {
        for (const { rule } of node['x-kubernetes-validations'] ?? []) {
          // Method calls (`self.contains(...)`, `self.all(...)`) are not field references.
          for (const m of rule.matchAll(/\b(?:self|oldSelf)\.([A-Za-z_][A-Za-z0-9_]*)(?![A-Za-z0-9_(])/g)) {
            const field = m[1] ?? '';
            if (node.properties?.[field] === undefined && typeof node.additionalProperties !== 'object')
              missing.push(`${path}: ${field}`);
          }
          // Macro variables over a list (`self.conditions.exists(c, c.type ...)`) name fields of its items.
          for (const m of rule.matchAll(
            /\b(?:self|oldSelf)(?:\.([A-Za-z_]+))?\.(?:exists|all|filter|map)\((\w+),/g,
          )) {
            const list = m[1] === undefined ? node : node.properties?.[m[1]];
            const variable = m[2] ?? '';
            const item = list?.items;
            if (item === undefined) continue;
            for (const f of rule.matchAll(new RegExp(`\\b${variable}\\.([A-Za-z_]+)`, 'g'))) {
              if (item.properties?.[f[1] ?? ''] === undefined) missing.push(`${path}: ${variable}.${f[1]}`);
            }
          }
        }
      });
      expect(missing).toEqual([]);
    },
  );
});
