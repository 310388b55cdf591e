// The notifications ConfigMap as the gateway publishes it (known settings only) and the Secrets it makes readable
// (only the keys it names), so the access-scheduler can read its sink's URL and signing keys at delivery time.
import type { KubernetesObject } from '@kubernetes/client-node';
import { publishedForm } from './published-form.js';
import { SecretReferenceIndex, secretReadVerdict } from './references.js';
import { notificationSecretReferences } from './notifications-configmap.js';

const configMap = (name: string, data: Record<string, string>): KubernetesObject =>
  ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: 'team-a' },
    data,
  }) as KubernetesObject;

const KEY = new Uint8Array(32);

describe('the notifications ConfigMap on the resource stream', () => {
  it('carries the known settings, and only the names of other keys', () => {
    const published = publishedForm(
      'ConfigMap',
      configMap('rolepolicy-notifications', {
        urlSecretName: 'hooks',
        signingSecretName: 'hooks',
        note: 'not a setting: hunter2',
      }),
      KEY,
    ) as unknown as Record<string, unknown>;
    expect(published['settings']).toEqual({ urlSecretName: 'hooks', signingSecretName: 'hooks' });
    expect(published['keys']).toEqual(['note', 'signingSecretName', 'urlSecretName']);
    expect(JSON.stringify(published)).not.toContain('hunter2');
    expect(published['data']).toBeUndefined();
  });

  it('any other ConfigMap stays metadata only', () => {
    const published = publishedForm('ConfigMap', configMap('other', { urlSecretName: 'x' }), KEY);
    expect((published as unknown as Record<string, unknown>)['settings']).toBeUndefined();
  });

  it('makes the named Secret keys readable, and no other key', () => {
    const index = new SecretReferenceIndex();
    const cm = configMap('rolepolicy-notifications', {
      urlSecretName: 'hooks',
      signingSecretName: 'hooks',
      signingKeys: 'next,current',
    });
    index.set('configmap/team-a/rolepolicy-notifications', 'team-a', cm, notificationSecretReferences(cm));
    const verdict = secretReadVerdict(
      'referenced',
      'team-a',
      'hooks',
      { metadata: { name: 'hooks' } },
      (ns, n) => index.has(ns, n),
      (ns, n) => index.keysOf(ns, n),
    );
    expect(verdict).toEqual({ ok: true, keys: ['current', 'next', 'url'] });
    expect(index.has('team-a', 'other')).toBe(false);
  });
});
