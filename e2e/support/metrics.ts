// A service's Prometheus figures as the tests read them: one metric's samples summed, per label value.

/**
 * The samples of `name` on `${url}/metrics`, summed per value of `label` (or under `total` without one).
 * @example (await metricSums(inspector.url, 'rp_inspect_requests_total', 'outcome'))['unchanged']
 */
export async function metricSums(url: string, name: string, label?: string): Promise<Record<string, number>> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const pattern = label === undefined ? undefined : new RegExp(`${label}="([^"]*)"`);
  const sums: Record<string, number> = {};
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const key = pattern === undefined ? 'total' : (pattern.exec(line)?.[1] ?? '');
    sums[key] = (sums[key] ?? 0) + Number(line.split(' ').at(-1));
  }
  return sums;
}
