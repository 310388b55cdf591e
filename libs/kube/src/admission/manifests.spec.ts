// Offline admission of manifest files (`rolepolicy validate -f`): same engine, per-document outcomes,
// rejections worded as kube-apiserver words them.
import { join } from 'node:path';
import { admitManifests } from './manifests.js';
import { readCrdDirectory } from './crd-files.js';

const manifests = `
apiVersion: rolepolicy.io/v1alpha1
kind: PostgresPolicy
metadata:
  name: app
  namespace: prod
spec:
  connection:
    secretRef:
      name: app-db
---
apiVersion: rolepolicy.io/v1alpha1
kind: PostgresPolicyCandidate
metadata:
  name: widen-grants
spec:
  policyRef:
    name: app
  content:
    grants:
      - object: { type: database }
        privileges: [CONNECT]
        role: app_rw
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: unrelated
---
apiVersion: rolepolicy.io/v1
kind: PostgresPolicy
metadata:
  name: wrong-version
spec: {}
---
apiVersion: v1
kind: List
items:
  - apiVersion: rolepolicy.io/v1alpha1
    kind: EphemeralAccessPolicy
    metadata: { name: readers }
    spec:
      approval: { mode: Automatic }
      justification: { required: true }
      maximumDuration: 1d
      memberships: [{ inherit: true, role: app_reader }]
      postgresPolicyRef: { name: app }
`;

describe('admitManifests', () => {
  it('admits each rolepolicy.io document as a create and reports the rest as skipped', () => {
    const results = admitManifests(manifests);
    expect(results.map((r) => [r.index, r.kind, r.name, r.outcome])).toEqual([
      [0, 'PostgresPolicy', 'app', 'accepted'],
      [1, 'PostgresPolicyCandidate', 'widen-grants', 'rejected'],
      [2, 'ConfigMap', 'unrelated', 'skipped'],
      [3, 'PostgresPolicy', 'wrong-version', 'rejected'],
      [4, 'EphemeralAccessPolicy', 'readers', 'rejected'],
    ]);
    expect(results[0]?.object?.['spec']).toMatchObject({ mode: 'apply', interval: '5m' });
    expect(results[1]?.message).toBe(
      'PostgresPolicyCandidate.rolepolicy.io "widen-grants" is invalid: spec.content.grants[0].object: Invalid value: "object": database grant targets must set name',
    );
    expect(results[3]?.message).toBe('no matches for kind "PostgresPolicy" in version "rolepolicy.io/v1"');
    expect(results[4]?.message).toBe(
      `EphemeralAccessPolicy.rolepolicy.io "readers" is invalid: spec.maximumDuration: Invalid value: "1d": spec.maximumDuration in body should match '^([0-9]+[smh])+$'`,
    );
  });

  it('checks against CRDs read from deploy/crds when given, with the same verdicts', () => {
    const crds = readCrdDirectory(join(process.cwd(), 'deploy', 'crds'));
    const fromFiles = admitManifests(manifests, { crds }).map((r) => [r.outcome, r.message]);
    expect(fromFiles).toEqual(admitManifests(manifests).map((r) => [r.outcome, r.message]));
  });

  it('reports a document that is not valid YAML without stopping at it', () => {
    const results = admitManifests('a: [1, 2\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: s}\n');
    expect(results.map((r) => r.outcome)).toEqual(['unparseable', 'skipped']);
    expect(results[0]?.message).toEqual(expect.any(String));
  });
});
