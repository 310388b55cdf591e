// The demo's candidate step: a proposal for the manual-approval policy "audit" is planned in the policy's
// context and shown (SQL preview, content digest), approved, merged into the policy, promoted (the approved
// plan runs as the policy's plan), and the new role shows up in the read-back that follows.
import type { KubeConfig } from '@kubernetes/client-node';
import { CandidateResources } from '../e2e/support/candidates.js';
import { condition, type PolicyResources } from '../e2e/support/resources.js';

type Follow = (
  what: string,
  probe: () => Promise<{ line: string; done: boolean }>,
  timeoutMs: number,
) => Promise<void>;

/** Runs the candidate step against policy `audit` (converged, apply + manual) holding role `auditor`. */
export async function candidateStep(
  kc: KubeConfig,
  namespace: string,
  resources: PolicyResources,
  follow: Follow,
  step: {
    readonly auditor: string;
    readonly reader: string;
    readonly database: string;
    readonly timeoutMs: number;
  },
): Promise<void> {
  const candidates = new CandidateResources(kc, namespace);
  const content = {
    roles: [
      { name: step.auditor, login: false },
      { name: step.reader, login: false },
    ],
    grants: [
      { role: step.auditor, object: { type: 'database', name: step.database }, privileges: ['CONNECT'] },
      { role: step.reader, object: { type: 'database', name: step.database }, privileges: ['CONNECT'] },
    ],
  };
  console.log(`\n3. PostgresPolicyCandidate "audit-reader": proposes role ${step.reader} for policy audit`);
  await candidates.create('audit-reader', 'audit', content);
  let planName = '';
  await follow(
    'the candidate to be Planned',
    async () => {
      const c = await candidates.get('audit-reader');
      const ready = condition(c.status?.conditions, 'Ready');
      planName = c.status?.planRef?.name ?? '';
      return {
        line: `audit-reader: phase ${c.status?.phase ?? 'Pending'}, Ready=${ready?.status ?? '-'}/${ready?.reason ?? '-'}`,
        done: c.status?.phase === 'Planned' && planName !== '',
      };
    },
    step.timeoutMs,
  );
  const candidate = await candidates.get('audit-reader');
  const plan = await resources.plan(planName);
  console.log(`  content digest ${candidate.status?.contentDigest}`);
  console.log(
    `  plan ${planName} (origin ${plan?.spec.origin?.kind}, base ${plan?.spec.origin?.baseContentDigest}):`,
  );
  for (const line of String(plan?.status?.sqlInline ?? '').split('\n')) console.log(`    ${line}`);
  console.log(`  approving ${planName} as demo@rolepolicy.io; nothing runs until the proposal is merged`);
  await resources.approve(planName, { username: 'demo@rolepolicy.io' });
  console.log('  merging the proposal into policy audit (its spec now carries the candidate content)');
  await resources.patchPolicySpec('audit', content);
  await follow(
    'the candidate to be Promoted',
    async () => {
      const c = await candidates.get('audit-reader');
      const promoted = condition(c.status?.conditions, 'Promoted');
      const phase = (await resources.plan(planName))?.status?.phase ?? '-';
      return {
        line: `audit-reader: phase ${c.status?.phase}, Promoted=${promoted?.status ?? '-'}/${promoted?.reason ?? '-'}, plan ${phase}`,
        done: c.status?.phase === 'Promoted',
      };
    },
    step.timeoutMs,
  );
}
