import { exportedSeries, metricNames } from './promql-metrics.js';

describe('metric names in PromQL', () => {
  it('finds selectors and skips functions, keywords, labels, ranges and grouping', () => {
    const expr =
      'histogram_quantile(0.99, sum by (le) (rate(a_seconds_bucket{x="b_total"}[10m]))) > 60 and on (job) max_over_time(c_total[5m]) or vector(0)';
    expect([...metricNames(expr)].sort()).toEqual(['a_seconds_bucket', 'c_total']);
  });

  it('reads a bare metric and one compared with another', () => {
    expect([...metricNames('sum(x) / ignoring(le) y > bool 2')].sort()).toEqual(['x', 'y']);
  });

  it('lists the series a histogram declares', () => {
    const text = '# HELP h_seconds d\n# TYPE h_seconds histogram\n# HELP c_total d\n# TYPE c_total counter\n';
    expect([...exportedSeries(text)].sort()).toEqual([
      'c_total',
      'h_seconds',
      'h_seconds_bucket',
      'h_seconds_count',
      'h_seconds_sum',
    ]);
  });
});
