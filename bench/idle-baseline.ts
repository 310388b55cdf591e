// The fleet's idle baseline (issue 28): each service's CPU while the stack is up and ready and no policy
// changes, over a window before a stage's policies are created, in ms of CPU per second. Multiplied by the
// stage's wall time and divided by its policies, it is the share of the services' CPU per policy that is
// paid by the clock (timers, pull expiries, heartbeats, lease renewals, metrics) rather than by the work.
import { idleRates } from './spine-counts.js';
import type { ProductProcesses } from './service-processes.js';

/** CPU ms per second of each service over `seconds` of doing nothing. */
export async function idleBaseline(
  product: ProductProcesses,
  seconds: number,
): Promise<Record<string, number>> {
  const before = product.cpuSeconds();
  const started = performance.now();
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  return idleRates(before, product.cpuSeconds(), (performance.now() - started) / 1000);
}
