// Counters scraped from the product's /metrics, summed over its service processes, and histogram means.
import { round } from './pg-bench-support.js';
import type { ProductProcesses } from './service-processes.js';

/**
 * A service's /metrics text. Asked again once when the connection fails: on the shared machine under load a
 * poll can come after the server closed the idle keep-alive connection (ECONNRESET), which ended a run.
 */
export async function metricsText(url: string): Promise<string> {
  try {
    return await (await fetch(`${url}/metrics`)).text();
  } catch {
    return (await fetch(`${url}/metrics`)).text();
  }
}

/** Sum of every sample of the counter `name` on the services' /metrics. */
export async function counterTotal(product: ProductProcesses, name: string): Promise<number> {
  let total = 0;
  for (const service of product.services) {
    const text = await metricsText(service.url);
    for (const line of text.split('\n')) {
      if (line.startsWith(`${name}{`) || line.startsWith(`${name} `)) total += Number(line.split(' ').at(-1));
    }
  }
  return total;
}

/** A metric's samples summed per value of `label` over every service (`name` may end in _count). */
export async function byLabel(
  product: ProductProcesses,
  name: string,
  label: string,
): Promise<Map<string, number>> {
  const totals = new Map<string, number>();
  const pattern = new RegExp(`${label}="([^"]*)"`);
  for (const service of product.services) {
    const text = await metricsText(service.url);
    for (const line of text.split('\n')) {
      if (!line.startsWith(`${name}{`)) continue;
      const value = pattern.exec(line)?.[1] ?? '';
      totals.set(value, (totals.get(value) ?? 0) + Number(line.split(' ').at(-1)));
    }
  }
  return totals;
}

/**
 * Mean of a histogram's observations in milliseconds (rounded to 0.1 ms), from the first series of `name` whose
 * labels contain `labels` (any series when empty); NaN when there is none.
 */
export function histogramMeanMs(metrics: string, name: string, labels = ''): number {
  const pick = (suffix: string): number => {
    const line = metrics
      .split('\n')
      .find(
        (l) =>
          (l.startsWith(`${name}_${suffix}{`) || l.startsWith(`${name}_${suffix} `)) && l.includes(labels),
      );
    return Number(line?.split(' ').pop() ?? NaN);
  };
  return round((pick('sum') / pick('count')) * 1000);
}
