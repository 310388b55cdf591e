// Candidate steps as k8s-gateway commands, through a sink that accepts only what a candidate may write:
// plans, their SQL ConfigMaps and candidate status (and retention deletes). A Secret, a policy or anything
// else is refused before it is sent, and there is no execution request in this vocabulary at all.
import type { PostgresPolicy } from '@rolepolicy/plan-lifecycle';
import { commandsOf, orderedBy, type UnkeyedCommand } from '../planning/gateway-commands.js';
import { candidateRef } from './resources.js';
import type { CandidateStep } from './steps.js';

const ALLOWED: Readonly<Record<UnkeyedCommand['command'], readonly string[]>> = {
  'apply-resource': ['PostgresPolicyPlan', 'ConfigMap'],
  'patch-status': ['PostgresPolicyPlan', 'PostgresPolicyCandidate'],
  'delete-resource': ['PostgresPolicyPlan', 'ConfigMap', 'PostgresPolicyCandidate'],
  'record-event': [],
  'set-finalizer': [],
};

/** Thrown for a command outside the candidate vocabulary (a bug, never a runtime condition). */
export class CandidateCommandRefused extends Error {}

/** Returns the command when a candidate pass may send it; throws otherwise. */
export function candidateCommand(command: UnkeyedCommand): UnkeyedCommand {
  if (!ALLOWED[command.command].includes(command.target.kind)) {
    throw new CandidateCommandRefused(
      `a candidate pass never sends ${command.command} for ${command.target.kind} (candidates never execute SQL or create Secrets)`,
    );
  }
  return command;
}

/** The gateway commands of one candidate step, in order, each checked by {@link candidateCommand}. */
export function candidateCommandsOf(step: CandidateStep, policy: PostgresPolicy): readonly UnkeyedCommand[] {
  switch (step.kind) {
    case 'createPlan':
      return commandsOf({ kind: 'createPlan', plan: step.plan, configMap: step.configMap }, policy).map(
        candidateCommand,
      );
    case 'patchPlanStatus':
      return commandsOf(
        { kind: 'patchPlanStatus', patch: step.patch, purpose: { kind: 'revalidate' } },
        policy,
      ).map(candidateCommand);
    case 'writeCandidateStatus':
      return [
        candidateCommand(
          orderedBy(policy, {
            v: 1,
            command: 'patch-status',
            target: candidateRef(step.candidate),
            status: replacing(step.candidate.status, step.status),
          }),
        ),
      ];
    case 'deleteCandidate':
      return [
        ...step.plans.flatMap((p) =>
          commandsOf({ kind: 'deletePlan', planName: p.planName, configMapName: p.configMapName }, policy),
        ),
        orderedBy(policy, { v: 1, command: 'delete-resource', target: candidateRef(step.candidate) }),
      ].map(candidateCommand);
    default: {
      const unreachable: never = step;
      return unreachable;
    }
  }
}

function replacing(current: object | undefined, next: object): Record<string, unknown> {
  const patch: Record<string, unknown> = { ...(next as Record<string, unknown>) };
  for (const key of Object.keys(current ?? {})) if (!(key in patch)) patch[key] = null;
  return patch;
}
