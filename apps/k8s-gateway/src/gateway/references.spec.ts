// The gateway publishes only the Secrets and ConfigMaps that rolepolicy.io objects name or own.
import { ownedByRolepolicy, referencedSecretNames } from './references.js';

test('connection secretRef, params Secret references and generated password Secrets are referenced', () => {
  const policy = {
    spec: {
      connection: {
        secretRef: { name: 'conn' },
        params: {
          host: 'db',
          passwordSecret: { name: 'pw', key: 'password' },
          usernameSecret: { name: 'user' },
        },
      },
      roles: [
        { name: 'app', password: { secretRef: { name: 'app-pw' } } },
        { name: 'svc', password: { generate: { secretName: 'svc-gen' } } },
      ],
    },
  };
  expect([...referencedSecretNames(policy)].sort()).toEqual(['app-pw', 'conn', 'pw', 'svc-gen', 'user']);
});

test('an object without spec references nothing', () => {
  expect(referencedSecretNames({ metadata: { name: 'x' } }).size).toBe(0);
});

test('ownership by a rolepolicy.io kind is recognised from ownerReferences', () => {
  const owned = {
    metadata: { ownerReferences: [{ apiVersion: 'rolepolicy.io/v1alpha1', kind: 'PostgresPolicyPlan' }] },
  };
  const foreign = { metadata: { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment' }] } };
  expect(ownedByRolepolicy(owned)).toBe(true);
  expect(ownedByRolepolicy(foreign)).toBe(false);
  expect(ownedByRolepolicy({ metadata: {} })).toBe(false);
});
