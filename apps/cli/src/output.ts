// Renders a plan for people (summary), for SQL review (redacted SQL) and for machines (JSON).
// Nothing here ever sees a verifier or cleartext password: only the redacted preview is printed.

import type { Change } from '@rolepolicy/policy';

import type { CliPlan } from './planning.js';

/** Plan output formats. */
export type PlanFormat = 'summary' | 'sql' | 'json';

function describe(change: Change): string {
  switch (change.kind) {
    case 'create_role':
    case 'alter_role':
    case 'set_comment':
    case 'set_password':
    case 'drop_role':
      return `${change.kind} ${JSON.stringify(change.name)}`;
    case 'create_schema':
    case 'alter_schema_owner':
    case 'ensure_schema_owner_privileges':
      return `${change.kind} ${JSON.stringify(change.name)}${change.owner ? ` owner ${JSON.stringify(change.owner)}` : ''}`;
    case 'grant':
    case 'revoke': {
      const target = [change.schema, change.name].filter((part) => part !== null).join('.');
      return `${change.kind} ${change.privileges.join(', ')} on ${change.object_type} ${target} ${change.kind === 'grant' ? 'to' : 'from'} ${change.role}`;
    }
    case 'set_default_privilege':
    case 'revoke_default_privilege': {
      const scope = change.scope.type === 'global' ? 'global' : `in schema ${change.scope.schema}`;
      return `${change.kind} ${change.privileges.join(', ')} on ${change.on_type} for ${change.owner} ${scope} to ${change.grantee}`;
    }
    case 'add_member':
    case 'remove_member':
      return `${change.kind} ${JSON.stringify(change.member)} in ${JSON.stringify(change.role)}`;
    case 'reassign_owned':
      return `reassign_owned ${JSON.stringify(change.from_role)} to ${JSON.stringify(change.to_role)}`;
    case 'drop_owned':
    case 'terminate_sessions':
      return `${change.kind} ${JSON.stringify(change.role)}`;
    default: {
      const unreachable: never = change;
      return String(unreachable);
    }
  }
}

/** The plan in the requested format (always ending with a newline). */
export function formatPlan(result: CliPlan, format: PlanFormat): string {
  const { plan, preview, digest } = result;
  switch (format) {
    case 'json':
      return `${JSON.stringify(
        {
          converged: plan.changes.length === 0,
          changes: plan.changes,
          phases: plan.phases,
          summary: plan.summary,
          warnings: plan.warnings,
          blockers: plan.blockers,
          ownerTransferBlocked: plan.ownerTransferBlocked,
          sql: preview.redactedSql,
          statementCount: preview.statementCount,
          redactedSqlHash: preview.redactedSqlHash,
          changeDigest: digest.digest,
          changeDigestEncoding: digest.encoding,
        },
        null,
        2,
      )}\n`;
    case 'sql':
      return `-- changeDigest: ${digest.digest} (${digest.encoding})\n${preview.redactedSql}${preview.redactedSql ? '\n' : ''}`;
    case 'summary': {
      if (plan.changes.length === 0)
        return `No changes: the database matches the policy.\nchangeDigest: ${digest.digest}\n`;
      const lines = [`Plan: ${plan.changes.length} changes, ${preview.statementCount} statements.`];
      for (const phase of plan.phases) {
        lines.push(`${phase.phase}:`);
        for (const index of phase.change_indices) lines.push(`  ${describe(plan.changes[index]!)}`);
      }
      const counters = Object.entries(plan.summary).filter(([key, value]) => key !== 'total' && value > 0);
      lines.push(`summary: ${counters.map(([key, value]) => `${key}=${value}`).join(' ')}`);
      lines.push(`changeDigest: ${digest.digest}`);
      return `${lines.join('\n')}\n`;
    }
    default: {
      const unreachable: never = format;
      return String(unreachable);
    }
  }
}
