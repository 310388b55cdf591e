// Environment variables of the planner, validated at start (see README "Configuration").
// Shared ones come from baseEnvSpec; add the planner's own variables below them.
import { baseEnvSpec, DEFAULT_HTTP_PORTS, type ConfigOf } from '@rolepolicy/runtime';

/** Every variable the planner reads. */
export const plannerEnvSpec = {
  ...baseEnvSpec(DEFAULT_HTTP_PORTS['planner']),
} as const;

/** The planner's validated configuration. */
export type PlannerConfig = ConfigOf<typeof plannerEnvSpec>;
