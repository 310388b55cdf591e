// client-node 1.x gives every API request a new http(s).Agent (KubeConfig.applySecurityAuthentication), so
// every call opens a new TCP connection and, against a real API server, a new TLS handshake: the largest
// single cost of the gateway's event loop after its own bookkeeping under fleet load. This keeps one
// keep-alive agent per distinct TLS material and hands it to every request instead.
import { createHash } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';

type AgentOptions = https.AgentOptions & { readonly [key: string]: unknown };

/** What makes two agents interchangeable: their class and TLS settings (key material hashed, never kept). */
function agentKey(agent: http.Agent, options: AgentOptions): string {
  const digest = (value: unknown): string =>
    value === undefined
      ? ''
      : createHash('sha256')
          .update(JSON.stringify(value ?? null))
          .digest('hex');
  return JSON.stringify([
    agent instanceof https.Agent ? 'https' : 'http',
    digest(options.ca?.toString()),
    digest(options.cert?.toString()),
    digest(options.key?.toString()),
    digest(options.pfx?.toString()),
    options.rejectUnauthorized ?? null,
    options.servername ?? null,
  ]);
}

/**
 * Makes `kc` reuse connections: the agent client-node built for a request is swapped for a cached keep-alive
 * agent with the same TLS settings (proxy agents and anything unknown are left alone). Returns `kc`.
 */
export function withConnectionReuse(kc: KubeConfig): KubeConfig {
  const agents = new Map<string, http.Agent>();
  const apply = kc.applySecurityAuthentication.bind(kc);
  kc.applySecurityAuthentication = async (context) => {
    await apply(context);
    const fresh = context.getAgent();
    if (fresh === undefined || (fresh.constructor !== https.Agent && fresh.constructor !== http.Agent))
      return;
    // Cast: Node's agents keep their constructor options in `options`, which @types/node does not declare.
    const options = (fresh as unknown as { options?: AgentOptions }).options;
    if (options === undefined) return;
    const key = agentKey(fresh, options);
    let agent = agents.get(key);
    if (agent === undefined) {
      const { keepAlive: _off, ...rest } = options;
      agent =
        fresh instanceof https.Agent
          ? new https.Agent({ ...rest, keepAlive: true })
          : new http.Agent({ ...(rest as http.AgentOptions), keepAlive: true });
      agents.set(key, agent);
    }
    context.setAgent(agent);
  };
  return kc;
}
