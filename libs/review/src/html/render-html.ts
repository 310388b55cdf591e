// renderReviewHtml: one self-contained HTML file for an artifact (inline CSS, inline SVG, a few lines of
// inline script for pan/zoom and search; nothing is fetched when it is opened). Reads only the artifact.

import type { Finding, Preflight, ReviewArtifact } from '../artifact.schema.js';
import { describeChange } from '../format-text.js';
import { layoutRoleGraph, type DrawnEdge, type DrawnGraph, type DrawnNode } from './graph-layout.js';

/** Escapes text for HTML element content and attribute values. */
export function escapeHtml(text: string): string {
  return text
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&#39;');
}

const e = escapeHtml;

const CSS = `
:root{--ink:#0f172a;--muted:#64748b;--line:#e2e8f0;--bg:#f8fafc;--card:#fff;--blue:#2563eb;--green:#16a34a;--red:#dc2626;--amber:#d97706;--violet:#7c3aed}
*{box-sizing:border-box}body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--ink);background:var(--bg)}
header{background:linear-gradient(120deg,#0f172a,#1e3a8a);color:#fff;padding:22px 32px}
header h1{margin:0 0 4px;font-size:22px;font-weight:650;letter-spacing:.2px}header .sub{opacity:.8;font-size:13px}
header code{background:rgba(255,255,255,.12);padding:1px 6px;border-radius:4px}
main{padding:20px 32px 48px;max-width:1600px;margin:0 auto}
section{margin-top:22px}h2{font-size:16px;margin:0 0 10px;font-weight:650}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(170px,1fr));gap:12px}
.card{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:12px 14px;box-shadow:0 1px 2px rgba(15,23,42,.04)}
.card .n{font-size:26px;font-weight:700}.card .l{color:var(--muted);font-size:12px;text-transform:uppercase;letter-spacing:.5px}
.pill{display:inline-block;padding:1px 8px;border-radius:999px;font-size:12px;font-weight:600;border:1px solid transparent}
.error,.failed{background:#fef2f2;color:#b91c1c;border-color:#fecaca}.warning,.unknown,.not_run{background:#fffbeb;color:#b45309;border-color:#fde68a}
.info,.passed{background:#eff6ff;color:#1d4ed8;border-color:#bfdbfe}
.High{background:#fef2f2;color:#b91c1c}.Review{background:#fffbeb;color:#b45309}.Informational{background:#f1f5f9;color:#475569}
.finding{display:flex;gap:10px;align-items:flex-start;background:var(--card);border:1px solid var(--line);border-left:4px solid var(--blue);border-radius:8px;padding:10px 12px;margin-bottom:8px}
.finding.sev-error{border-left-color:var(--red)}.finding.sev-warning{border-left-color:var(--amber)}
.finding .k{font-family:ui-monospace,monospace;font-size:12px;color:var(--muted)}
table{border-collapse:collapse;width:100%;background:var(--card);border:1px solid var(--line);border-radius:8px;overflow:hidden}
th,td{text-align:left;padding:7px 10px;border-bottom:1px solid var(--line);vertical-align:top}th{background:#f1f5f9;font-size:12px;color:#334155}
.graph{position:relative;background:#fff;border:1px solid var(--line);border-radius:10px;height:72vh;overflow:hidden;cursor:grab}
.graph svg{width:100%;height:100%;display:block}.graph:active{cursor:grabbing}
.tools{display:flex;gap:8px;align-items:center;margin-bottom:8px;flex-wrap:wrap}.tools input{padding:6px 10px;border:1px solid var(--line);border-radius:6px;min-width:240px}
.tools button{padding:6px 10px;border:1px solid var(--line);border-radius:6px;background:#fff;cursor:pointer}
.legend{display:flex;gap:14px;flex-wrap:wrap;color:var(--muted);font-size:12px}.legend span{display:inline-flex;align-items:center;gap:5px}
.sw{width:14px;height:10px;border-radius:3px;display:inline-block;border:2px solid}
details.phase{background:var(--card);border:1px solid var(--line);border-radius:8px;margin-bottom:8px}
details.phase summary{padding:9px 12px;cursor:pointer;font-weight:600}details.phase ol{margin:0;padding:0 12px 10px 44px}
details.phase li{padding:2px 0}.delta{color:var(--muted);font-size:12px;padding:0 12px 10px}
pre.sql{background:#0f172a;color:#e2e8f0;padding:14px;border-radius:8px;overflow:auto;max-height:60vh;font-size:12.5px}
.muted{color:var(--muted)}.mono{font-family:ui-monospace,monospace}
g.node rect{stroke-width:1.5}g.node text{font-size:12px;fill:#0f172a;pointer-events:none}g.node text.d{font-size:10px;fill:#64748b}
g.node.dim,path.dim{opacity:.12}g.node.hit rect{stroke:#f59e0b;stroke-width:3}
`;

const SCRIPT = `
(function(){var box=document.getElementById('graph'),svg=box.querySelector('svg'),vp=svg.querySelector('#viewport');
var s=1,x=0,y=0,drag=null;function apply(){vp.setAttribute('transform','translate('+x+','+y+') scale('+s+')')}
function fit(){var w=+svg.dataset.w,h=+svg.dataset.h,r=box.getBoundingClientRect();s=Math.min(r.width/w,r.height/h,1.4);if(s<0.45){s=Math.min(0.45,r.width/w)}x=Math.max((r.width-w*s)/2,0);y=Math.max((r.height-h*s)/2,0);apply()}
box.addEventListener('wheel',function(ev){ev.preventDefault();var r=box.getBoundingClientRect(),mx=ev.clientX-r.left,my=ev.clientY-r.top,f=ev.deltaY<0?1.15:1/1.15;x=mx-(mx-x)*f;y=my-(my-y)*f;s*=f;apply()},{passive:false});
box.addEventListener('mousedown',function(ev){drag=[ev.clientX-x,ev.clientY-y]});window.addEventListener('mouseup',function(){drag=null});
window.addEventListener('mousemove',function(ev){if(drag){x=ev.clientX-drag[0];y=ev.clientY-drag[1];apply()}});
document.getElementById('fit').onclick=fit;var q=document.getElementById('q'),nodes=svg.querySelectorAll('g.node'),edges=svg.querySelectorAll('path.edge');
q.oninput=function(){var t=q.value.trim().toLowerCase(),hit={},near={};nodes.forEach(function(n){if(t&&n.dataset.label.toLowerCase().indexOf(t)>=0)hit[n.dataset.id]=1});
edges.forEach(function(p){var on=hit[p.dataset.s]||hit[p.dataset.t];if(on){near[p.dataset.s]=1;near[p.dataset.t]=1}p.classList.toggle('dim',!!t&&!on)});
nodes.forEach(function(n){n.classList.toggle('hit',!!hit[n.dataset.id]);n.classList.toggle('dim',!!t&&!near[n.dataset.id]&&!hit[n.dataset.id])})};fit();window.addEventListener('resize',fit)})();
`;

const NODE_STYLE: Record<DrawnNode['kind'], { fill: string; stroke: string; rx: number; dash?: string }> = {
  role: { fill: '#dbeafe', stroke: '#2563eb', rx: 6 },
  external_principal: { fill: '#ffffff', stroke: '#94a3b8', rx: 6, dash: '4 3' },
  grant_target: { fill: '#ecfdf5', stroke: '#059669', rx: 14 },
  default_privilege_target: { fill: '#f5f3ff', stroke: '#7c3aed', rx: 14 },
};

const EDGE_COLOR: Record<DrawnEdge['kind'], string> = {
  membership: '#334155',
  grant: '#059669',
  default_privilege: '#7c3aed',
};

const MARK_COLOR = { added: '#16a34a', changed: '#d97706', removed: '#dc2626' } as const;

function nodeSvg(n: DrawnNode): string {
  const style = NODE_STYLE[n.kind];
  let fill = style.fill;
  let stroke = style.stroke;
  if (n.kind === 'role' && n.managed === false) {
    fill = '#f1f5f9';
    stroke = '#64748b';
  } else if (n.kind === 'role' && n.login) {
    fill = '#e0f2fe';
    stroke = '#0284c7';
  }
  const mark = n.mark === null ? null : MARK_COLOR[n.mark];
  const x = n.x - n.width / 2;
  const y = n.y - n.height / 2;
  const dash = n.mark === 'removed' ? '5 3' : style.dash;
  const title = [n.label, n.kind.replaceAll('_', ' '), n.login ? 'login' : '', n.detail, n.mark ?? '']
    .filter(Boolean)
    .join(' · ');
  const icon = n.kind === 'role' ? (n.login ? '● ' : '◆ ') : '';
  const textY = n.detail !== '' && n.kind !== 'role' ? n.y - 4 : n.y + 4;
  return (
    `<g class="node" data-id="${e(n.id)}" data-label="${e(n.label)}"><title>${e(title)}</title>` +
    `<rect x="${x}" y="${y}" width="${n.width}" height="${n.height}" rx="${style.rx}" fill="${n.mark === 'removed' ? '#fef2f2' : fill}" stroke="${mark ?? stroke}"${mark ? ' stroke-width="3"' : ''}${dash ? ` stroke-dasharray="${dash}"` : ''}/>` +
    `<text x="${n.x}" y="${textY}" text-anchor="middle">${e(icon + n.label)}</text>` +
    (n.detail !== '' && n.kind !== 'role'
      ? `<text class="d" x="${n.x}" y="${n.y + 11}" text-anchor="middle">${e(n.detail.length > 40 ? `${n.detail.slice(0, 38)}…` : n.detail)}</text>`
      : '') +
    (n.mark === 'added' || n.mark === 'removed'
      ? `<circle cx="${x + n.width}" cy="${y}" r="8" fill="${mark}"/><text x="${x + n.width}" y="${y + 4}" text-anchor="middle" style="fill:#fff;font-weight:700">${n.mark === 'added' ? '+' : '−'}</text>`
      : '') +
    '</g>'
  );
}

function edgeSvg(edge: DrawnEdge): string {
  if (edge.points.length === 0) return '';
  const [first, ...rest] = edge.points;
  const d = `M${first!.x},${first!.y}` + rest.map((p) => `L${p.x},${p.y}`).join('');
  const color = edge.mark === null ? EDGE_COLOR[edge.kind] : MARK_COLOR[edge.mark];
  const width = edge.mark === null ? 1.2 : 2.4;
  const dash =
    edge.mark === 'removed'
      ? ' stroke-dasharray="6 4"'
      : edge.kind === 'default_privilege'
        ? ' stroke-dasharray="2 3"'
        : '';
  const marker = edge.mark ?? edge.kind;
  return `<path class="edge" data-s="${e(edge.source)}" data-t="${e(edge.target)}" d="${d}" fill="none" stroke="${color}" stroke-width="${width}"${dash} marker-end="url(#arrow-${marker})" opacity="${edge.mark === null ? 0.55 : 0.95}"><title>${e(`${edge.kind}: ${edge.label}${edge.mark ? ` (${edge.mark})` : ''}`)}</title></path>`;
}

function graphSvg(graph: DrawnGraph): string {
  const markers = Object.entries({ ...EDGE_COLOR, ...MARK_COLOR })
    .map(
      ([name, color]) =>
        `<marker id="arrow-${name}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0L10,5L0,10z" fill="${color}"/></marker>`,
    )
    .join('');
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" role="img" aria-label="role graph after the plan" data-w="${graph.width}" data-h="${graph.height}">` +
    `<defs>${markers}</defs><g id="viewport">` +
    graph.edges.map(edgeSvg).join('') +
    graph.nodes.map(nodeSvg).join('') +
    '</g></svg>'
  );
}

function findingHtml(f: Finding): string {
  const where = [
    f.phase ? `phase ${f.phase}` : '',
    f.role ? `role ${f.role}` : '',
    f.change_indices.length > 0 ? `changes ${f.change_indices.join(', ')}` : '',
  ]
    .filter(Boolean)
    .join(' · ');
  return `<div class="finding sev-${f.severity}"><span class="pill ${f.severity}">${f.severity}</span><div><div>${e(f.message)}</div><div class="k">${e(f.kind)}${where ? ` · ${e(where)}` : ''}</div></div></div>`;
}

function preflightRow(p: Preflight): string {
  const issues =
    p.issues.length === 0
      ? '<span class="muted">none</span>'
      : `<ul>${p.issues.map((i) => `<li><span class="mono">${e(i.code)}</span>: ${e(i.message)}</li>`).join('')}</ul>`;
  const coverage = `${p.coverage.kind}; ${p.coverage.checks_performed.map((c) => c.replaceAll('_', ' ')).join(', ') || 'no checks ran'}; checked ${p.coverage.checked_change_indices.length}, unchecked ${p.coverage.unchecked_change_indices.length}`;
  return `<tr><td class="mono">${e(p.check)}</td><td><span class="pill ${p.status}">${e(p.status.replace('_', ' '))}</span></td><td>${e(coverage)}</td><td>${issues}</td></tr>`;
}

/**
 * The HTML report of an artifact. Deterministic: the same artifact gives the same bytes.
 * @example `writeFileSync('review.html', renderReviewHtml(artifact));`
 */
export function renderReviewHtml(artifact: ReviewArtifact): string {
  const { provenance, context, recorded } = artifact;
  const graph = layoutRoleGraph(artifact);
  const bySeverity = (s: Finding['severity']) => recorded.findings.filter((f) => f.severity === s).length;
  const byPriority = (p: string) => recorded.changes.filter((c) => c.priority === p).length;
  const meta = recorded.visual.meta;
  const cards = [
    [
      'changes',
      String(recorded.changes.length),
      `${byPriority('High')} high · ${byPriority('Review')} review`,
    ],
    [
      'findings',
      String(recorded.findings.length),
      `${bySeverity('error')} errors · ${bySeverity('warning')} warnings`,
    ],
    [
      'preflight',
      artifact.preflight.filter((p) => p.status === 'passed').length + '/' + artifact.preflight.length,
      'checks passed',
    ],
    ['roles after plan', String(meta.role_count), `${meta.membership_count} memberships`],
    ['grants after plan', String(meta.grant_count), `${meta.default_privilege_count} default privileges`],
  ]
    .map(
      ([l, n, s]) =>
        `<div class="card"><div class="l">${e(l!)}</div><div class="n">${e(n!)}</div><div class="muted">${e(s!)}</div></div>`,
    )
    .join('');
  const phases = recorded.phases
    .map((phase) => {
      const items = phase.change_indices
        .map((i) => {
          const c = recorded.changes[i]!;
          return `<li value="${i}"><span class="pill ${c.priority}">${c.priority}</span> ${e(describeChange(c.change))}${(c.omissions ?? []).length > 0 ? ' <span class="muted">(sensitive values omitted)</span>' : ''}</li>`;
        })
        .join('');
      const delta = phase.executor_reachability_delta;
      const deltaText = [
        ...delta.changed.filter((d) => d.status !== 'reachable').map((d) => `${d.role} ${d.status}`),
        ...delta.removed.map((r) => `${r} removed`),
      ];
      return `<details class="phase"${phase.change_indices.length <= 40 ? ' open' : ''}><summary>${e(phase.phase.replaceAll('_', ' '))} <span class="muted">(${phase.change_indices.length})</span></summary><ol>${items}</ol>${deltaText.length > 0 && phase !== recorded.phases[0] ? `<div class="delta">executor access after this phase: ${e(deltaText.slice(0, 20).join(', '))}${deltaText.length > 20 ? ' …' : ''}</div>` : ''}</details>`;
    })
    .join('');
  const sql =
    recorded.sql_preview.status === 'available'
      ? `<pre class="sql">${e(recorded.sql_preview.sql || '-- no statements')}</pre>`
      : `<p class="muted">The SQL preview is omitted: changes ${e(recorded.sql_preview.sensitive_change_indices.join(', '))} carry passwords, role comments or configuration values.</p>`;
  const legend = [
    ['#e0f2fe', '#0284c7', '● login role'],
    ['#dbeafe', '#2563eb', '◆ group role'],
    ['#fff', '#94a3b8', 'external principal'],
    ['#ecfdf5', '#059669', 'grant target'],
    ['#f5f3ff', '#7c3aed', 'default privileges'],
    ['#fff', '#16a34a', 'added by the plan'],
    ['#fff', '#d97706', 'changed'],
    ['#fef2f2', '#dc2626', 'removed'],
  ]
    .map(
      ([fill, stroke, label]) =>
        `<span><i class="sw" style="background:${fill};border-color:${stroke}"></i>${e(label!)}</span>`,
    )
    .join('');
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<title>Review: ${e(provenance.target_label)}</title><style>${CSS}</style></head>
<body><header><h1>Plan review · ${e(provenance.target_label)}</h1>
<div class="sub">PostgreSQL ${provenance.pg_major_version} · ${e(context.mode)} mode · executor <code>${e(context.intended_executor.role)}</code>${context.intended_executor.superuser ? ' (superuser)' : ''} · captured ${e(provenance.captured_at)}</div>
<div class="sub">policy <code>${e(provenance.policy.content_digest.slice(0, 19))}…</code>${provenance.policy.commit ? ` at <code>${e(provenance.policy.commit)}</code>` : ''} · fingerprint <code>${e(recorded.review_fingerprint.slice(0, 19))}…</code> · tool ${e(provenance.tool_version)}</div></header>
<main>
<section><div class="cards">${cards}</div></section>
<section><h2>Findings</h2>${recorded.findings.length === 0 ? '<p class="muted">No findings.</p>' : recorded.findings.map(findingHtml).join('')}</section>
<section><h2>Preflight</h2><table><thead><tr><th>check</th><th>status</th><th>coverage</th><th>issues</th></tr></thead><tbody>${artifact.preflight.map(preflightRow).join('')}</tbody></table>
${context.authority_graph_complete ? '' : '<p class="muted">The executor\'s membership graph was not read for this review: authority results are incomplete.</p>'}</section>
<section><h2>Role graph after the plan</h2>
<div class="tools"><input id="q" type="search" placeholder="Find a role or target…" aria-label="find"><button id="fit" type="button">Fit</button>
<span class="muted">${graph.nodes.length} nodes · ${graph.edges.length} edges${graph.collapsed ? ' · targets folded per schema' : ''}${graph.omittedNodes > 0 ? ` · ${graph.omittedNodes} less connected roles not drawn (all are in the JSON artifact)` : ''} · scroll to zoom, drag to pan</span></div>
<div class="legend">${legend}</div>
<div class="graph" id="graph">${graphSvg(graph)}</div></section>
<section><h2>Phases</h2>${phases || '<p class="muted">No changes: the database matches the policy.</p>'}</section>
<section><h2>SQL preview</h2>${sql}</section>
</main><script>${SCRIPT}</script></body></html>
`;
}
