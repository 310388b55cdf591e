// The demo's time-boxed access step: an EphemeralAccessPolicy on policy "shop", a request for the login role,
// its activation, the membership read from pg_auth_members before, while Active and after, its expiry and revocation.
import type pg from 'pg';
import type { KubeConfig } from '@kubernetes/client-node';
import type { EphemeralAccessRequest } from '@rolepolicy/kube';
import { EphemeralResources } from '../e2e/support/ephemeral.js';
import { condition } from '../e2e/support/resources.js';

type Follow = (
  what: string,
  probe: () => Promise<{ line: string; done: boolean }>,
  timeoutMs: number,
) => Promise<void>;

/** Phases a request never leaves; reaching one other than Ended means the grant went wrong. */
const TERMINAL = new Set(['Ended', 'Revoked', 'Cancelled', 'Denied', 'ApprovalExpired', 'Failed']);

/** What a user sees with `kubectl get ephemeralaccessrequest -o yaml`, on one line. */
function describeRequest(name: string, request: EphemeralAccessRequest | undefined): string {
  const s = request?.status;
  const ready = condition(s?.conditions, 'Ready');
  const applied = condition(s?.conditions, 'Applied');
  return [
    `request ${name}: phase ${s?.phase ?? 'Pending'}`,
    `Ready=${ready?.status ?? '-'}/${ready?.reason ?? '-'}`,
    applied ? `Applied=${applied.status}/${applied.reason ?? '-'}` : undefined,
    s?.expiresAt ? `expiresAt ${s.expiresAt}` : undefined,
    s?.endedAt ? `endedAt ${s.endedAt}` : undefined,
    s?.lastError ? `lastError: ${s.lastError}` : undefined,
  ]
    .filter((part) => part !== undefined)
    .join(', ');
}

/**
 * Runs the step against the converged apply/auto policy `shop`, which declares `role` and the login `member`;
 * `admin` is a connection to the demo database. Throws when the grant fails, or the membership is missing
 * while Active or still there after the request Ended.
 */
export async function ephemeralStep(
  kc: KubeConfig,
  namespace: string,
  admin: pg.Client,
  follow: Follow,
  step: {
    readonly member: string;
    readonly role: string;
    readonly seconds: number;
    readonly timeoutMs: number;
    /** The access-scheduler's Bull Board, where the expiry timer waits. */
    readonly dashboard?: { readonly url: string; readonly access: string };
  },
): Promise<void> {
  const access = new EphemeralResources(kc, namespace);
  const membership = async (): Promise<string> => {
    const { rows } = await admin.query<{ admin_option: boolean }>(
      `SELECT m.admin_option FROM pg_auth_members m
         JOIN pg_roles r ON r.oid = m.roleid JOIN pg_roles u ON u.oid = m.member
        WHERE r.rolname = $1 AND u.rolname = $2`,
      [step.role, step.member],
    );
    const row = rows[0];
    return row
      ? `${step.member} is a member of ${step.role} (admin_option ${row.admin_option})`
      : `${step.member} is not a member of ${step.role}`;
  };

  console.log(
    `\n5. ephemeral access: ${step.member} gets ${step.role} for ${step.seconds} s (EphemeralAccessPolicy, approval Automatic)`,
  );
  console.log(`  pg_auth_members before the request: ${await membership()}`);
  await access.create('EphemeralAccessPolicy', 'billing-read', {
    approval: { mode: 'Automatic' },
    justification: { required: true },
    maximumDuration: '1h',
    memberships: [{ role: step.role, inherit: true }],
    postgresPolicyRef: { name: 'shop' },
  });
  await follow(
    'access policy billing-read to be Accepted',
    async () => {
      const policy = await access.accessPolicy('billing-read');
      const accepted = condition(policy?.status?.conditions, 'Accepted');
      return {
        line: `access policy billing-read: Accepted=${accepted?.status ?? '-'}/${accepted?.reason ?? '-'}, resolvedRoles [${(policy?.status?.resolvedRoles ?? []).join(', ')}]`,
        done: accepted?.status === 'True',
      };
    },
    step.timeoutMs,
  );

  console.log(
    `  EphemeralAccessRequest app-billing: subject ${step.member}, requestedDuration ${step.seconds}s, requestedBy demo@rolepolicy.io`,
  );
  await access.create('EphemeralAccessRequest', 'app-billing', {
    accessPolicyRef: { name: 'billing-read' },
    subject: { role: step.member },
    requestedBy: { username: 'demo@rolepolicy.io' },
    requestedDuration: `${step.seconds}s`,
    justification: 'demo: month-end report',
  });
  // Activation: resolved (clock started), the activation plan applied by the executor, then Active.
  await follow(
    'request app-billing to become Active',
    async () => {
      const request = await access.request('app-billing');
      const phase = request?.status?.phase ?? 'Pending';
      if (TERMINAL.has(phase)) {
        throw new Error(
          `request app-billing ended before it was Active: ${describeRequest('app-billing', request)}`,
        );
      }
      return { line: describeRequest('app-billing', request), done: phase === 'Active' };
    },
    step.timeoutMs,
  );
  const granted = await membership();
  console.log(`  pg_auth_members while Active: ${granted}`);
  if (!granted.includes(' is a member of ')) {
    throw new Error(`request app-billing is Active but pg_auth_members has no row: ${granted}`);
  }
  const active = await access.request('app-billing');
  console.log(
    `  waiting for the expiry at ${active?.status?.expiresAt ?? '-'} (activatedAt ${active?.status?.activatedAt ?? '-'})`,
  );
  if (step.dashboard) {
    console.log(
      `  timer queues (Bull Board, ${step.dashboard.access}): ${step.dashboard.url} (queue ephemeral-access-expiry)`,
    );
  }
  // Expiry: the timer fires, Revoking runs the revoke plan, Ended once it applied.
  await follow(
    'request app-billing to expire and be revoked',
    async () => {
      const request = await access.request('app-billing');
      const phase = request?.status?.phase ?? 'Pending';
      if (TERMINAL.has(phase) && phase !== 'Ended') {
        throw new Error(
          `request app-billing did not expire normally: ${describeRequest('app-billing', request)}`,
        );
      }
      return { line: describeRequest('app-billing', request), done: phase === 'Ended' };
    },
    step.seconds * 1000 + step.timeoutMs,
  );
  const after = await membership();
  console.log(`  pg_auth_members after expiry: ${after}`);
  if (after.includes(' is a member of ')) {
    throw new Error(`request app-billing Ended but the membership is still there: ${after}`);
  }
  console.log(`  membership revoked: ${step.member} no longer holds ${step.role}`);
}
