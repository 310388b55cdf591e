// Process entry of the planner: validates the environment, then boots the service.
// Exits with status 1 and names the variable when the configuration is wrong.
import { runService } from '@rolepolicy/runtime';
import { plannerService } from './service.js';

await runService(plannerService);
