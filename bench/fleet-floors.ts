// The fleet bench's glue for the spine floor (spine-floor.ts) and the idle baseline (idle-baseline.ts): what a
// stage records for them while it runs, and the figures they add to the report, so fleet.bench.ts only calls.
import { floorApiWrites, idleCpuMsPerPolicy, ratio, writeOp } from './spine-counts.js';
import { SpineCapture, stageTemplates } from './spine-capture.js';
import { spineFloor, type SpineFloor, type StageShape } from './spine-floor.js';
import type { ProductProcesses } from './service-processes.js';

/** How each label's total grew between two samples of a labelled counter. */
export function grownTotals(
  before: ReadonlyMap<string, number>,
  after: ReadonlyMap<string, number>,
): Map<string, number> {
  return new Map([...after].map(([k, v]) => [k, v - (before.get(k) ?? 0)]));
}

/** Records a stage for its spine floor: start before the stage's policies are created. */
export class StageRecording {
  private constructor(private readonly capture: SpineCapture) {}

  static async start(product: ProductProcesses): Promise<StageRecording> {
    return new StageRecording(await SpineCapture.start(product.nats.url));
  }

  /**
   * Call once the stage converged, while its product still runs: the traffic, and one object of each
   * resource the stage wrote (its API still holds them).
   */
  async finish(
    product: ProductProcesses,
    namespace: string,
    stage: Omit<StageShape, 'traffic' | 'templates'>,
  ): Promise<StageShape> {
    const traffic = await this.capture.stop();
    const written = floorApiWrites(stage.apiWrites).writes.keys();
    const resources = [...new Set([...written].map((k) => writeOp(k).resource))];
    const templates = await stageTemplates(product.emulator.kubeConfig(namespace), namespace, resources);
    return { ...stage, traffic, templates };
  }
}

/** The spine floor of a recorded stage, its line for the console, and the services' CPU over it. */
export async function measureSpineFloor(
  shape: StageShape,
  serviceCpuMsPerPolicy: number | undefined,
): Promise<{ floor: SpineFloor; over: number | null; line: string }> {
  const floor = await spineFloor(shape);
  const over = ratio(serviceCpuMsPerPolicy, floor.cpuMsPerPolicy.total);
  const c = floor.cpuMsPerPolicy;
  const line =
    `  spine floor: ${c.total} ms CPU per policy (messaging ${c.messaging}, cache deliveries ` +
    `${c.cacheDeliveries}, API writes ${c.apiWrites}); services' ${serviceCpuMsPerPolicy} ms = ${over}x it`;
  return { floor, over, line };
}

/** The idle rates' share per policy over a stage, and its line for the console. */
export function idleShare(
  rates: Readonly<Record<string, number>>,
  stageSeconds: number,
  policies: number,
): { perPolicy: number; line: string } {
  const perPolicy = idleCpuMsPerPolicy(rates, stageSeconds, policies);
  return {
    perPolicy,
    line: `  idle: ${JSON.stringify(rates)} ms CPU/s; over the stage's ${Math.round(stageSeconds)} s, ${perPolicy} ms per policy`,
  };
}
