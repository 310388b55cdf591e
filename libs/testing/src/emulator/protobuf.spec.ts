// The Kubernetes protobuf codec of the emulator: what it encodes decodes to the same JSON object for
// each special type (Time, MicroTime, bytes, int64, IntOrString-free core kinds), with the API
// server's framing, and Go's zero values (empty strings, zero times) are left out as its JSON does.
import { decodeProtobuf, encodeProtobuf, hasProtobuf, prefersProtobuf } from './protobuf.js';

test('a Secret round-trips: base64 data as bytes, labels, ownerReferences, generation as int64', () => {
  const secret = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: 'db',
      namespace: 'team-a',
      uid: 'u-1',
      resourceVersion: '42',
      generation: 3,
      creationTimestamp: '2026-11-25T10:00:00Z',
      labels: { app: 'orders' },
      ownerReferences: [
        {
          apiVersion: 'rolepolicy.io/v1alpha1',
          kind: 'PostgresPolicy',
          name: 'p',
          uid: 'u-0',
          controller: true,
        },
      ],
    },
    type: 'Opaque',
    data: { password: Buffer.from('s3cret').toString('base64') },
  };
  const bytes = encodeProtobuf(secret);
  expect(bytes.subarray(0, 4).toString('latin1')).toBe('k8s\0');
  expect(decodeProtobuf(bytes)).toEqual(secret);
});

test('an Event round-trips its Time and MicroTime fields and its count', () => {
  const event = {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: 'p.1', namespace: 'team-a' },
    involvedObject: {
      apiVersion: 'rolepolicy.io/v1alpha1',
      kind: 'PostgresPolicyPlan',
      name: 'p',
      namespace: 'team-a',
      uid: 'u',
    },
    reason: 'PlanApplied',
    message: 'applied',
    type: 'Normal',
    source: { component: 'rolepolicy-planner' },
    firstTimestamp: '2026-11-25T10:00:00Z',
    lastTimestamp: '2026-11-25T10:05:00Z',
    eventTime: '2026-11-25T10:05:00.123456Z',
    count: 7,
  };
  expect(decodeProtobuf(encodeProtobuf(event))).toEqual(event);
});

test('a list carries its items without their apiVersion/kind, as the API server lists do', () => {
  const list = {
    apiVersion: 'v1',
    kind: 'ConfigMapList',
    metadata: { resourceVersion: '9' },
    items: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' }, data: { k: 'v' } }],
  };
  expect(decodeProtobuf(encodeProtobuf(list))).toEqual({
    apiVersion: 'v1',
    kind: 'ConfigMapList',
    metadata: { resourceVersion: '9' },
    items: [{ metadata: { name: 'a' }, data: { k: 'v' } }],
  });
});

test('which kinds and Accept headers select protobuf', () => {
  expect(
    ['Namespace', 'Secret', 'ConfigMap', 'Event', 'ServiceAccount', 'SecretList'].every(hasProtobuf),
  ).toBe(true);
  expect(hasProtobuf('PostgresPolicy')).toBe(false);
  expect(prefersProtobuf('application/vnd.kubernetes.protobuf,application/json')).toBe(true);
  expect(prefersProtobuf('application/json, */*')).toBe(false);
  expect(
    prefersProtobuf('application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io,application/json'),
  ).toBe(false);
});

test('a body without the k8s\\0 prefix is refused; a meta/v1 Status decodes', () => {
  const bytes = encodeProtobuf({
    apiVersion: 'v1',
    kind: 'Status',
    metadata: {},
    status: 'Failure',
    code: 404,
  });
  expect(() => decodeProtobuf(Buffer.from('nope'))).toThrow(/k8s\\0 prefix/);
  expect(decodeProtobuf(bytes)).toMatchObject({ kind: 'Status', status: 'Failure', code: 404 });
});
