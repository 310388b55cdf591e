// Which failures outside SQL are retried and which become a Failed result at once.
import { DatabaseError, ExecutionError, InspectionError } from '@rolepolicy/catalog';
import { classifyFailure } from './failures.js';
import { SecretReadUnavailableError, SecretUnavailableError } from './secrets.js';

describe('classifyFailure', () => {
  it('an unreadable Secret fails closed at once', () => {
    expect(classifyFailure(new SecretUnavailableError('no connection for target t'))).toMatchObject({
      class: 'permanent',
      reason: 'SecretUnavailable',
    });
  });

  it.each(['ECONNREFUSED', '08006', '53300', '57P01', '55P03', '40001'])(
    '%s is retried by redelivery',
    (code) => {
      expect(classifyFailure(new DatabaseError('unreachable', code))).toMatchObject({
        class: 'transient',
        reason: 'DatabaseUnavailable',
      });
    },
  );

  it.each(['28P01', '3D000', '42501'])('%s is permanent and keeps its SQLSTATE in the message', (code) => {
    const failure = classifyFailure(new DatabaseError('refused', code));
    expect(failure).toMatchObject({ class: 'permanent', reason: 'DatabaseError' });
    expect(failure.message).toContain(code);
  });

  it('an unexpected error is retried and its message (which may hold anything) is not repeated', () => {
    const failure = classifyFailure(new TypeError('postgres://u:secret@h/db'));
    expect(failure).toMatchObject({ class: 'transient', reason: 'PreparationFailed' });
    expect(failure.message).not.toContain('secret');
  });

  it('a statement that collided with another session is retried; one that failed on its own is not', () => {
    const collided = new ExecutionError(
      'statement 1 of 1 failed (SQLSTATE 23505)',
      0,
      'GRANT "a" TO "b"',
      '23505',
    );
    expect(classifyFailure(collided)).toMatchObject({ class: 'transient', reason: 'DatabaseError' });
    const updated = new ExecutionError('tuple concurrently updated', 0, 'ALTER ROLE "a"', 'XX000');
    expect(classifyFailure(updated).class).toBe('transient');
    const denied = new ExecutionError('permission denied (SQLSTATE 42501)', 0, 'CREATE ROLE "a"', '42501');
    expect(classifyFailure(denied).class).toBe('permanent');
  });

  it('a Secret read nobody answered is retried; a refused one fails at once', () => {
    const unanswered = new SecretReadUnavailableError(
      'reading Secret bench/db-84: the Kubernetes API did not answer',
    );
    expect(classifyFailure(unanswered)).toMatchObject({ class: 'transient', reason: 'SecretUnavailable' });
    expect(classifyFailure(new SecretUnavailableError('Secret bench/db-84 not found')).class).toBe(
      'permanent',
    );
  });

  it('an inspection error is permanent', () => {
    expect(classifyFailure(new InspectionError('scope names another database'))).toMatchObject({
      class: 'permanent',
      reason: 'PreparationFailed',
    });
  });
});
