// `rolepolicy review --format text`: a terminal summary of an artifact, findings and preflight issues
// first, then the changes grouped by phase. Reads only the artifact, so it never sees a secret.

import type { ArtifactChange, ReviewArtifact } from './artifact.schema.js';

/** One line describing an artifact change. */
export function describeChange(change: ArtifactChange): string {
  switch (change.kind) {
    case 'create_role': {
      const flags = (
        ['login', 'superuser', 'createdb', 'createrole', 'replication', 'bypassrls'] as const
      ).filter((f) => change.state[f]);
      return `create role ${change.name}${flags.length > 0 ? ` (${flags.join(', ')})` : ''}`;
    }
    case 'create_schema':
      return `create schema ${change.name}${change.owner ? ` owned by ${change.owner}` : ''}`;
    case 'alter_schema_owner':
      return `transfer schema ${change.name} to ${change.owner}`;
    case 'ensure_schema_owner_privileges':
      return `give owner ${change.owner} ${change.privileges.join(', ')} on schema ${change.name}`;
    case 'alter_role':
      return `alter role ${change.name}: ${change.attributes
        .map((a) =>
          'parameter' in a
            ? `${a.kind} ${a.parameter}`
            : `${a.kind}=${a.value === undefined ? 'null' : String(a.value)}`,
        )
        .join(', ')}`;
    case 'set_comment':
      return `${change.comment_present ? 'set' : 'clear'} comment of ${change.name}`;
    case 'grant':
    case 'revoke': {
      const target = [change.schema, change.name].filter((p) => p !== null && p !== undefined).join('.');
      return `${change.kind} ${change.privileges.join(', ')} on ${change.object_type} ${target} ${change.kind === 'grant' ? 'to' : 'from'} ${change.role}`;
    }
    case 'set_default_privilege':
    case 'revoke_default_privilege': {
      const scope = change.scope.type === 'global' ? 'everywhere' : `in ${change.scope.schema}`;
      return `${change.kind === 'set_default_privilege' ? 'default grant' : 'default revoke'} ${change.privileges.join(', ')} on new ${change.on_type}s by ${change.owner} ${scope} ${change.kind === 'set_default_privilege' ? 'to' : 'from'} ${change.grantee}`;
    }
    case 'add_member':
      return `add ${change.member} to ${change.role}${change.inherit ? '' : ' (noinherit)'}${change.admin ? ' (admin)' : ''}`;
    case 'remove_member':
      return `remove ${change.member} from ${change.role}`;
    case 'reassign_owned':
      return `reassign objects owned by ${change.from_role} to ${change.to_role}`;
    case 'drop_owned':
      return `drop objects owned by ${change.role}`;
    case 'terminate_sessions':
      return `terminate sessions of ${change.role}`;
    case 'set_password':
      return `set password of ${change.name}`;
    case 'drop_role':
      return `drop role ${change.name}`;
    default: {
      const unreachable: never = change;
      return String(unreachable);
    }
  }
}

const MARK = { error: '✖', warning: '▲', info: '•' } as const;

/** The terminal summary (ends with a newline). */
export function formatReviewText(artifact: ReviewArtifact): string {
  const { provenance, context, recorded } = artifact;
  const lines: string[] = [
    `Review of ${provenance.target_label} (PostgreSQL ${provenance.pg_major_version}, ${context.mode} mode)`,
    `policy ${provenance.policy.content_digest}${provenance.policy.commit ? ` at ${provenance.policy.commit}` : ''}, captured ${provenance.captured_at}`,
    `executor ${context.intended_executor.role}${context.intended_executor.superuser ? ' (superuser)' : ''}; ${recorded.changes.length} changes in ${recorded.phases.length} phases`,
    '',
  ];
  const issues = artifact.preflight.flatMap((p) => p.issues.map((i) => ({ check: p.check, ...i })));
  lines.push(`Findings (${recorded.findings.length})`);
  if (recorded.findings.length === 0) lines.push('  none');
  for (const f of recorded.findings) {
    const where = f.change_indices.length > 0 ? ` [changes ${f.change_indices.join(', ')}]` : '';
    lines.push(`  ${MARK[f.severity]} ${f.severity} ${f.kind}: ${f.message}${where}`);
  }
  lines.push('', 'Preflight');
  for (const p of artifact.preflight) {
    lines.push(
      `  ${p.check}: ${p.status} (${p.coverage.kind}, ${p.issue_count} issue${p.issue_count === 1 ? '' : 's'})`,
    );
  }
  for (const i of issues) lines.push(`    ${i.check} ${i.code}: ${i.message}`);
  lines.push('');
  for (const phase of recorded.phases) {
    lines.push(`Phase ${phase.phase} (${phase.change_indices.length})`);
    for (const index of phase.change_indices) {
      const c = recorded.changes[index]!;
      lines.push(`  ${String(index).padStart(4)} ${c.priority.padEnd(13)} ${describeChange(c.change)}`);
    }
    const lost = phase.executor_reachability_delta.changed.filter((d) => d.status !== 'reachable');
    if (lost.length > 0 && phase !== recorded.phases[0]) {
      lines.push(`       executor access: ${lost.map((d) => `${d.role} ${d.status}`).join(', ')}`);
    }
  }
  if (recorded.phases.length === 0) lines.push('No changes: the database matches the policy.');
  lines.push('');
  lines.push(
    recorded.sql_preview.status === 'available'
      ? 'SQL preview: available (--format json or html)'
      : `SQL preview: omitted (sensitive changes ${recorded.sql_preview.sensitive_change_indices.join(', ')})`,
  );
  lines.push(`review_fingerprint: ${recorded.review_fingerprint}`);
  return `${lines.join('\n')}\n`;
}
