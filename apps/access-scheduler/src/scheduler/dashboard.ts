// Bull Board on the service's HTTP server (Express under Nest): the timer and notification queues at a
// configurable path, read-only unless configured otherwise. Mounted before Nest adds its not-found handler.
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import type { Queue } from 'bullmq';

/** Anything with Express's `use` (Nest's HTTP adapter instance). */
export interface MountPoint {
  use(path: string, handler: unknown): unknown;
}

/** Normalises the configured path: leading `/`, no trailing `/`. */
export function dashboardPath(path: string): string {
  const trimmed = `/${path.replace(/^\/+|\/+$/g, '')}`;
  return trimmed === '/' ? '/queues' : trimmed;
}

/** Mounts the dashboard for `queues` at `path`. */
export function mountDashboard(
  app: MountPoint,
  path: string,
  queues: readonly Queue[],
  readOnly: boolean,
): void {
  const serverAdapter = new ExpressAdapter();
  const base = dashboardPath(path);
  serverAdapter.setBasePath(base);
  createBullBoard({
    queues: queues.map((q) => new BullMQAdapter(q, { readOnlyMode: readOnly })),
    serverAdapter,
    options: { uiConfig: { boardTitle: 'rolepolicy access-scheduler queues' } },
  });
  app.use(base, serverAdapter.getRouter());
}
