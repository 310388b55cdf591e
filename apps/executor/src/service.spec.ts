// The executor's slot counts: revocations run in slots of their own, everything else in EXECUTOR_CONCURRENCY,
// and no durable lets the server hand out fewer messages than one replica's slots could take.
import { SPINE_CONSUMERS, slotsFor } from '@rolepolicy/contracts';
import { loadConfig } from '@rolepolicy/runtime';
import { MAX_EXECUTOR_CONCURRENCY, executorEnvSpec } from './config.js';
import { executorService } from './service.js';

const slotsWith = (env: Record<string, string>) => {
  const counts = executorService.concurrency!(loadConfig(executorEnvSpec, env));
  return Object.fromEntries(SPINE_CONSUMERS.executor.map((c) => [c.durable, slotsFor(counts, c.durable)]));
};

describe('executor slots per durable', () => {
  it('by default 8 revocations and 4 of every other kind at once', () => {
    expect(slotsWith({})).toEqual({
      'executor-execute': 4,
      'executor-scoped': 4,
      'executor-scoped-revoke': 8,
    });
  });

  it('EXECUTOR_REVOKE_CONCURRENCY sets the revocation slots only', () => {
    expect(slotsWith({ EXECUTOR_CONCURRENCY: '2', EXECUTOR_REVOKE_CONCURRENCY: '16' })).toEqual({
      'executor-execute': 2,
      'executor-scoped': 2,
      'executor-scoped-revoke': 16,
    });
  });

  it('refuses a revocation slot count outside 1..32, naming the variable', () => {
    expect(() => loadConfig(executorEnvSpec, { EXECUTOR_REVOKE_CONCURRENCY: '0' })).toThrow(
      /EXECUTOR_REVOKE_CONCURRENCY.*between 1 and 32/,
    );
    expect(() => loadConfig(executorEnvSpec, { EXECUTOR_REVOKE_CONCURRENCY: '33' })).toThrow(
      /EXECUTOR_REVOKE_CONCURRENCY/,
    );
  });

  it('every executor durable lets one replica fill all its slots (maxAckPending)', () => {
    for (const consumer of SPINE_CONSUMERS.executor) {
      expect(consumer.maxAckPending).toBeGreaterThanOrEqual(MAX_EXECUTOR_CONCURRENCY);
    }
  });
});
