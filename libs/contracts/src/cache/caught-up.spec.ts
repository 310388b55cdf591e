// When a resource cache's consumer counts as caught up: by the server's pending count, or by its scan
// position when that count stays one too many (nats-server 2.9, LastPerSubject).
import { caughtUpWith } from './cache-types.js';

const info = (pending: number, streamSeq: number, consumerSeq: number) => ({
  name: 'c1',
  num_pending: pending,
  delivered: { stream_seq: streamSeq, consumer_seq: consumerSeq },
});
const applied = (delivery: number) => ({ appliedConsumer: 'c1', appliedDelivery: delivery });

describe('caughtUpWith', () => {
  it('is caught up when nothing is pending and every delivery is applied', () => {
    expect(caughtUpWith(applied(3), info(0, 9, 3), 20)).toBe(true);
  });

  it('is caught up past the target even while the server still counts one message pending', () => {
    expect(caughtUpWith(applied(5), info(1, 23, 5), 12)).toBe(true);
  });

  it('is not caught up while the scan is short of the target and something is pending', () => {
    expect(caughtUpWith(applied(2), info(1, 10, 2), 12)).toBe(false);
  });

  it('is never caught up while a delivered message is not applied yet', () => {
    expect(caughtUpWith(applied(4), info(0, 23, 5), 12)).toBe(false);
    expect(caughtUpWith({ appliedConsumer: 'old', appliedDelivery: 9 }, info(0, 23, 5), 12)).toBe(false);
  });

  it('is caught up when the consumer has delivered nothing and nothing is pending', () => {
    expect(caughtUpWith({ appliedConsumer: '', appliedDelivery: 0 }, info(0, 0, 0), 7)).toBe(true);
  });
});
