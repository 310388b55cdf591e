// A command about an object the API does not have is decided without calling the API: dropped when there is
// nothing to do, refused NotFound when it would write.
import type { K8sCommandV1 } from '@rolepolicy/contracts';
import { absentTargetOutcome, type HasObject } from './absent-target.js';

const target = {
  apiVersion: 'rolepolicy.io/v1alpha1',
  kind: 'PostgresPolicy',
  namespace: 'shop',
  name: 'app',
  uid: 'u1',
};
const gone: HasObject = () => false;
const present: HasObject = () => true;
const unwatched: HasObject = () => undefined;

describe('absentTargetOutcome', () => {
  it('drops a delete or an Event about an object that is gone, as applied', () => {
    const del = { v: 1, command: 'delete-resource', target, idempotencyKey: 'k' } as K8sCommandV1;
    expect(absentTargetOutcome(del, gone)).toEqual({ kind: 'applied', resourceVersion: undefined });
    expect(absentTargetOutcome(del, present)).toBeUndefined();
    expect(absentTargetOutcome(del, unwatched)).toBeUndefined();
  });

  it('refuses a status patch or an added finalizer NotFound, and takes a removed finalizer as done', () => {
    const patch = { v: 1, command: 'patch-status', target, status: {}, idempotencyKey: 'k' } as K8sCommandV1;
    expect(absentTargetOutcome(patch, gone)).toMatchObject({
      kind: 'rejected',
      code: 404,
      reason: 'NotFound',
    });
    const add = {
      v: 1,
      command: 'set-finalizer',
      target,
      finalizer: 'f',
      present: true,
      idempotencyKey: 'k',
    };
    expect(absentTargetOutcome(add as K8sCommandV1, gone)).toMatchObject({ kind: 'rejected', code: 404 });
    expect(absentTargetOutcome({ ...add, present: false } as K8sCommandV1, gone)).toEqual({
      kind: 'applied',
      resourceVersion: undefined,
    });
  });

  it('goes to the API when the target names no uid', () => {
    const { uid: _uid, ...noUid } = target;
    const patch = {
      v: 1,
      command: 'patch-status',
      target: noUid,
      status: {},
      idempotencyKey: 'k',
    } as K8sCommandV1;
    expect(absentTargetOutcome(patch, gone)).toBeUndefined();
  });

  it('refuses a create whose controlling owner is gone, naming the owner', () => {
    const owner = { apiVersion: 'rolepolicy.io/v1alpha1', kind: 'PostgresPolicy', name: 'app', uid: 'u1' };
    const apply = (controller: boolean) =>
      ({
        v: 1,
        command: 'apply-resource',
        target: { ...target, kind: 'PostgresPolicyPlan', name: 'app-1', uid: undefined },
        object: { metadata: { ownerReferences: [{ ...owner, controller }] } },
        idempotencyKey: 'k',
      }) as unknown as K8sCommandV1;
    expect(absentTargetOutcome(apply(true), gone)).toMatchObject({
      kind: 'rejected',
      message: 'the owner PostgresPolicy shop/app is not in the API any more',
    });
    expect(absentTargetOutcome(apply(false), gone)).toBeUndefined();
    expect(absentTargetOutcome(apply(true), present)).toBeUndefined();
  });
});
