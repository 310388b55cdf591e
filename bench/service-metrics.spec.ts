// Histogram means read from a service's /metrics text (the ephemeral bench's revocation hops).
import { histogramMeanMs } from './service-metrics.js';

const METRICS = [
  '# TYPE rolepolicy_ephemeral_revocation_lag_seconds histogram',
  'rolepolicy_ephemeral_revocation_lag_seconds_bucket{le="1"} 3',
  'rolepolicy_ephemeral_revocation_lag_seconds_sum 1.5',
  'rolepolicy_ephemeral_revocation_lag_seconds_count 4',
  'rolepolicy_ephemeral_scoped_stage_seconds_sum{operation="Grant",stage="queued"} 9',
  'rolepolicy_ephemeral_scoped_stage_seconds_count{operation="Grant",stage="queued"} 1',
  'rolepolicy_ephemeral_scoped_stage_seconds_sum{operation="Revoke",stage="queued"} 0.25',
  'rolepolicy_ephemeral_scoped_stage_seconds_count{operation="Revoke",stage="queued"} 2',
].join('\n');

describe('histogramMeanMs', () => {
  it('answers the mean in milliseconds of a histogram without labels', () => {
    expect(histogramMeanMs(METRICS, 'rolepolicy_ephemeral_revocation_lag_seconds')).toBe(375);
  });

  it('answers the mean of the series whose labels match, not the first series of the name', () => {
    expect(
      histogramMeanMs(
        METRICS,
        'rolepolicy_ephemeral_scoped_stage_seconds',
        'operation="Revoke",stage="queued"',
      ),
    ).toBe(125);
  });

  it('answers NaN for a histogram the service has not observed', () => {
    expect(histogramMeanMs(METRICS, 'rolepolicy_ephemeral_revoke_dispatch_seconds')).toBeNaN();
  });
});
