// The "Memory health" page as HTML, from `kin.memory.stats` and `kin.memory.list`. No `vscode` import
// (unit-tested in plain Node): health.ts puts the page in a webview and carries out what its buttons ask.
//
// Safety: paths, stamps and reasons come from the store (untrusted). Every such text is escaped here and
// reaches the page as text, never as markup; the page's script creates no markup at all (no innerHTML),
// it only posts the number of the button pressed. What a number does (open this URI, filter the tree to
// these paths, run this command) stays on the extension's side in `targets`, so a page can never ask for
// anything the extension did not put there. The policy allows nothing but this page's own nonce'd style
// and script: no remote resources, no inline style attributes (bar widths are nonce'd CSS rules).
import { displayRoot } from "./paths";
import { CATEGORIES, plainSnippet, printablePath } from "./present";
import type { MemoryEntry, MemoryGroup, RootSource, StatsResult } from "./protocol";

export const HEALTH_STATUSES = ["ok", "stale", "expiring", "expired", "quiet"] as const;
export type HealthStatus = (typeof HEALTH_STATUSES)[number];

export const STATUS_WORDS: Record<HealthStatus, string> = {
  ok: "fine", stale: "stale", expiring: "expiring", expired: "expired", quiet: "quiet",
};

const STATUS_HINTS: Record<HealthStatus, string> = {
  ok: "nothing to do",
  stale: "project facts untouched for a long time: review them",
  expiring: "the sweep deletes them soon",
  expired: "the next sweep deletes them",
  quiet: "stamped with a repository path that no longer exists: no workspace sees them",
};

const ROOT_SOURCES: Record<RootSource, string> = {
  argument: "the server's --root argument",
  KIN_MEMORY_DIR: "the KIN_MEMORY_DIR environment variable",
  "editor setting": "the Kin Memory: Memory Dir setting",
  "global settings": "memory_dir in ~/.kin/settings.toml",
  default: "the default location",
};

/** What a button of the page does; the page only ever names one by its index. */
export type HealthTarget =
  | { kind: "open"; uri: string }
  | { kind: "filter"; label: string; paths: string[] }
  | { kind: "group"; group: MemoryGroup }
  | { kind: "command"; command: string; args?: unknown[] }
  | { kind: "setEnabled"; enabled: boolean }
  | { kind: "refresh" };

export interface HealthPage {
  html: string;
  targets: HealthTarget[];
}

export interface PageEnv {
  nonce: string;
  home: string;
  /** The store's findings that need action (from the editor's diagnostics), in any order. */
  attention?: readonly Attention[];
}

/** One finding the page leads with: an error, a memory that looks like a secret, a sync conflict. */
export interface Attention {
  kind: "error" | "secret" | "conflict";
  code: string;
  message: string;
  path: string; // "/memories/…"
  uri: string;
  line: number; // 0-based
}

const ATTENTION_ORDER: Record<Attention["kind"], number> = { error: 0, secret: 1, conflict: 2 };
const ATTENTION_WORDS: Record<Attention["kind"], string> = { error: "error", secret: "secret", conflict: "sync conflict" };

/** Which findings need action, by kind: errors (any code at error severity), KM602 secrets, KM800 conflicts. */
export function attentionKind(code: string, isError: boolean): Attention["kind"] | undefined {
  if (isError) return "error";
  if (code === "KM602") return "secret";
  if (code === "KM800") return "conflict";
  return undefined;
}

/** Errors first, then secrets, then conflicts; by path and line within a kind. */
export function sortAttention(items: readonly Attention[]): Attention[] {
  return [...items].sort((a, b) => ATTENTION_ORDER[a.kind] - ATTENTION_ORDER[b.kind]
    || a.path.localeCompare(b.path) || a.line - b.line);
}

/** Text for HTML, in element content and in double-quoted attributes alike. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] ?? c);
}

/** A path from the store as shown: control characters escaped, then HTML-escaped. */
const showPath = (p: string) => escapeHtml(printablePath(p.replace(/^\/memories\//, "")));

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** The memories behind each (category, status) count: the listing, with the quiet ones taken out of their status. */
export function segmentPaths(stats: Pick<StatsResult, "quietByRepository">, memories: readonly MemoryEntry[]): Map<string, string[]> {
  const quiet = new Set(stats.quietByRepository.flatMap((r) => r.paths));
  const out = new Map<string, string[]>();
  for (const m of memories) {
    const status: HealthStatus = quiet.has(m.path) ? "quiet" : m.status;
    const key = `${m.category}/${status}`;
    out.set(key, [...(out.get(key) ?? []), m.path]);
  }
  return out;
}

export function formatKB(bytes: number): string {
  return `${(bytes / 1024).toFixed(1)} KB`;
}

/** The whole page. */
export function healthPage(stats: StatsResult, memories: readonly MemoryEntry[], env: PageEnv): HealthPage {
  const targets: HealthTarget[] = [];
  const rules: string[] = [];
  const button = (target: HealthTarget, label: string, attrs = ""): string => {
    targets.push(target);
    return `<button type="button" data-id="${targets.length - 1}"${attrs ? " " + attrs : ""}>${label}</button>`;
  };
  const width = (id: string, grow: number) => rules.push(`#${id}{flex-grow:${grow}}`);
  const open = (path: string, uri: string) => button({ kind: "open", uri }, `<code>${showPath(path)}</code>`, `class="link" title="Open ${escapeHtml(printablePath(path))}"`);

  const parts: string[] = [];
  // -- the header: the switch, the root, the workspaces
  const on = stats.memoryEnabled;
  parts.push(`<header><h1>Memory health</h1>`);
  parts.push(`<div class="switchline">${button({ kind: "setEnabled", enabled: !on }, on ? "Memory is on" : "Memory is off",
    `role="switch" aria-checked="${on}" class="switch ${on ? "on" : "off"}" id="memory-switch"`)}`
    + `<span class="muted">${on ? "Agents read and write memories. Turning it off writes <code>memory_enabled = false</code> into your global settings file."
      : "Agents neither read nor write memories. Turning it on writes <code>memory_enabled = true</code> into your global settings file."}</span></div>`);
  parts.push(`<p>Store: <code id="store-root">${escapeHtml(printablePath(displayRoot(stats.root, env.home)))}</code>, found by ${escapeHtml(ROOT_SOURCES[stats.rootSource] ?? stats.rootSource)}.`
    + ` Workspaces: ${stats.workspaces.length ? stats.workspaces.map((w) => `<code>${escapeHtml(printablePath(w))}</code>`).join(", ") : "none (every memory is counted as visible)"}.`
    + ` ${button({ kind: "refresh" }, "Refresh", 'class="secondary"')}</p></header>`);

  // -- what needs action comes first: errors, secrets, sync conflicts
  const attention = sortAttention(env.attention ?? []);
  parts.push(`<section aria-labelledby="h-attention"><h2 id="h-attention">${attention.length
    ? `Needs your attention: ${plural(attention.length, "finding", "findings")}` : "Needs your attention"}</h2>`);
  if (!attention.length) parts.push(`<p class="muted" id="attention-none">No errors, no secrets, no sync conflicts.</p>`);
  else {
    parts.push(`<ul id="attention-list">`);
    for (const a of attention) {
      parts.push(`<li data-kind="${a.kind}"><span class="kind kind-${a.kind === "error" ? "contradiction" : "duplicate"}">${ATTENTION_WORDS[a.kind]}</span> `
        + `${open(a.path, a.uri)} <span class="muted">line ${a.line + 1} · ${escapeHtml(a.code)}: ${escapeHtml(plainSnippet(a.message, 200))}</span></li>`);
    }
    parts.push(`</ul><p>${button({ kind: "command", command: "workbench.actions.view.problems" }, "Show all problems", 'class="secondary"')}</p>`);
  }
  parts.push(`</section>`);

  // -- categories: a stacked bar per category and the same numbers as a table
  const segments = segmentPaths(stats, memories);
  const total = CATEGORIES.reduce((n, c) => n + (stats.byCategory[c]?.total ?? 0), 0);
  parts.push(`<section aria-labelledby="h-categories"><h2 id="h-categories">${plural(total, "memory", "memories")} by category</h2>`);
  parts.push(`<div class="legend">${HEALTH_STATUSES.map((s) => {
    const paths = CATEGORIES.flatMap((c) => segments.get(`${c}/${s}`) ?? []);
    return button({ kind: "filter", label: STATUS_WORDS[s], paths }, `<span class="swatch st-${s}" aria-hidden="true"></span>${STATUS_WORDS[s]}`,
      `class="chip" title="${escapeHtml(STATUS_HINTS[s])}: show them in the Kin Memory view"`);
  }).join("")}</div>`);
  parts.push(`<div class="chart">`);
  CATEGORIES.forEach((c, ci) => {
    const counts = stats.byCategory[c] ?? { total: 0, ok: 0, stale: 0, expiring: 0, expired: 0, quiet: 0 };
    const all = HEALTH_STATUSES.flatMap((s) => segments.get(`${c}/${s}`) ?? []);
    const label = button({ kind: "filter", label: c, paths: all }, escapeHtml(c), `class="catname" title="Show the ${escapeHtml(c)} memories in the Kin Memory view"`);
    const segs = HEALTH_STATUSES.filter((s) => counts[s] > 0).map((s) => {
      const id = `seg-${ci}-${s}`;
      width(id, counts[s]);
      const words = `${counts[s]} ${STATUS_WORDS[s]} ${c}`;
      return button({ kind: "filter", label: `${c}, ${STATUS_WORDS[s]}`, paths: segments.get(`${c}/${s}`) ?? [] }, String(counts[s]),
        `class="seg st-${s}" id="${id}" aria-label="${escapeHtml(words)}: show them" title="${escapeHtml(words)}"`);
    });
    const bar = segs.length ? segs.join("") : '<span class="empty">none</span>';
    const share = total ? Math.max(counts.total / total, 0.0001) : 0;
    const barId = `bar-${ci}`;
    rules.push(`#${barId}{width:${(share * 100).toFixed(2)}%}`);
    parts.push(`<div class="row">${label}<span class="total">${counts.total}</span><div class="track"><div class="bar" id="${barId}">${bar}</div></div></div>`);
  });
  parts.push(`</div>`);
  parts.push(`<table id="category-table"><caption>The same numbers; each opens the memories behind it in the Kin Memory view.</caption>`
    + `<thead><tr><th scope="col">Category</th><th scope="col">Total</th>${HEALTH_STATUSES.map((s) => `<th scope="col">${STATUS_WORDS[s]}</th>`).join("")}</tr></thead><tbody>`);
  for (const c of CATEGORIES) {
    const counts = stats.byCategory[c] ?? { total: 0, ok: 0, stale: 0, expiring: 0, expired: 0, quiet: 0 };
    const cells = HEALTH_STATUSES.map((s) => {
      const n = counts[s];
      const inner = n ? button({ kind: "filter", label: `${c}, ${STATUS_WORDS[s]}`, paths: segments.get(`${c}/${s}`) ?? [] }, String(n), `class="num" aria-label="${n} ${STATUS_WORDS[s]} ${escapeHtml(c)}"`) : "0";
      return `<td data-category="${escapeHtml(c)}" data-status="${s}">${inner}</td>`;
    }).join("");
    parts.push(`<tr><th scope="row">${escapeHtml(c)}</th><td data-category="${escapeHtml(c)}" data-status="total">${counts.total}</td>${cells}</tr>`);
  }
  parts.push(`</tbody></table></section>`);

  // -- what expires this week
  parts.push(`<section aria-labelledby="h-expiring"><h2 id="h-expiring">Expiring in the next 7 days</h2>`);
  if (!stats.expiringSoon.length) parts.push(`<p class="muted" id="expiring-none">Nothing expires this week.</p>`);
  else {
    parts.push(`<ul id="expiring-list">`);
    for (const e of stats.expiringSoon) {
      const when = e.days <= 0 ? "within the day" : `in ${plural(e.days, "day", "days")}`;
      parts.push(`<li>${open(e.path, e.uri)} <span class="muted">${escapeHtml(e.category)} · ${when} (${escapeHtml(e.expires)})</span></li>`);
    }
    parts.push(`</ul>`);
  }
  parts.push(`</section>`);

  // -- quiet memories, by the repository they lost
  parts.push(`<section aria-labelledby="h-quiet"><h2 id="h-quiet">Quiet memories: their repository has moved</h2>`);
  if (!stats.quietByRepository.length) parts.push(`<p class="muted">None: every stamped repository still exists.</p>`);
  for (const r of stats.quietByRepository) {
    parts.push(`<h3><code>${escapeHtml(printablePath(r.workspace))}</code> · ${plural(r.paths.length, "memory", "memories")} `
      + `${button({ kind: "command", command: "kinMemory.restamp", args: [{ stamp: r.workspace }] }, "Re-stamp…", 'class="secondary"')}</h3><ul>`);
    r.paths.forEach((p, i) => parts.push(`<li>${open(p, r.uris[i] ?? "")}</li>`));
    parts.push(`</ul>`);
  }
  parts.push(`</section>`);

  // -- duplicates and contradictions
  parts.push(`<section aria-labelledby="h-groups"><h2 id="h-groups">Duplicates and contradictions</h2>`);
  if (!stats.groups.length) parts.push(`<p class="muted">None found among the memories this workspace sees.</p>`);
  else {
    parts.push(`<ul id="group-list">`);
    for (const g of stats.groups) {
      const files = g.paths.map((p, i) => open(p, g.uris[i] ?? "")).join(" ");
      parts.push(`<li><span class="kind kind-${g.kind === "contradiction" ? "contradiction" : "duplicate"}">${escapeHtml(g.kind)}</span> ${files} `
        + `${button({ kind: "group", group: g }, "Side by side", 'class="secondary"')}<div class="muted reason">${escapeHtml(plainSnippet(g.reason, 240))}</div></li>`);
    }
    parts.push(`</ul>`);
  }
  parts.push(`</section>`);

  // -- the prompt block against its caps
  const pb = stats.promptBlock;
  const meter = (id: string, used: number, cap: number) => {
    rules.push(`#${id}{width:${Math.min(100, cap ? (used / cap) * 100 : 0).toFixed(2)}%}`);
    return `<div class="meter" role="img" aria-label="${Math.round(cap ? (used / cap) * 100 : 0)} percent"><div class="fill${used >= cap ? " full" : ""}" id="${id}"></div></div>`;
  };
  parts.push(`<section aria-labelledby="h-prompt"><h2 id="h-prompt">The prompt block</h2>`
    + `<p class="muted">What the agent is given at the start of a session: MEMORY.md, up to ${pb.maxLines} lines and ${formatKB(pb.maxBytes).replace(".0 ", " ")}.</p>`
    + `<div class="meterline"><span id="prompt-lines">${pb.lines} of ${pb.maxLines} lines</span>${meter("meter-lines", pb.lines, pb.maxLines)}</div>`
    + `<div class="meterline"><span id="prompt-bytes">${formatKB(pb.bytes)} of ${formatKB(pb.maxBytes)}</span>${meter("meter-bytes", pb.bytes, pb.maxBytes)}</div>`
    + (pb.truncated ? `<p class="warn">The block is cut at the cap: the rest is not given to the agent.</p>` : "")
    + `<p>${button({ kind: "command", command: "kinMemory.indexPreview" }, "Preview the prompt block", 'class="secondary"')}</p></section>`);

  // -- review queue and index
  const idx = stats.indexState;
  const indexWords = idx.state === "ready" ? `ready, ${plural(idx.memories, "memory", "memories")} indexed`
    : idx.state === "building" ? "being built" : "unavailable: search falls back to reading the files";
  parts.push(`<section aria-labelledby="h-more"><h2 id="h-more">Review and search</h2><ul class="plain">`
    + `<li><span id="review-queue">${stats.reviewQueue ? plural(stats.reviewQueue, "change waits", "changes wait") + " for your review" : "No change waits for your review"}</span> `
    + `${stats.reviewQueue ? button({ kind: "command", command: "workbench.view.extension.kin-memory" }, "Show the changes", 'class="secondary"') : ""}</li>`
    + `<li>Search index: <span id="index-state">${escapeHtml(indexWords)}</span> ${button({ kind: "command", command: "kinMemory.reindex" }, "Reindex", 'class="secondary"')}`
    + (idx.state === "ready" && idx.memories !== total
      ? `<div class="muted" id="index-note">${total > idx.memories
        ? `${plural(total - idx.memories, "memory counted above is", "memories counted above are")} not in the search index: session memories and files that cannot be read are counted but not searched`
        : "The index holds more memories than the store counts now: Reindex brings it up to date"}.</div>` : "")
    + `</li>`
    + `</ul></section>`);

  const n = escapeHtml(env.nonce);
  const html = `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">`
    + `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'nonce-${n}'; script-src 'nonce-${n}';">`
    + `<meta name="viewport" content="width=device-width, initial-scale=1"><title>Memory health</title>`
    + `<style nonce="${n}">${STYLE}${rules.join("")}</style></head>`
    + `<body><main id="kin-health">${parts.join("")}</main>`
    + `<script nonce="${n}">${SCRIPT}</script></body></html>`;
  return { html, targets };
}

// The page's only behaviour: say which button was pressed (Enter and Space press a focused button too).
const SCRIPT = `(function(){const vscode=acquireVsCodeApi();document.addEventListener("click",function(e){`
  + `const b=e.target instanceof Element?e.target.closest("button[data-id]"):null;`
  + `if(b)vscode.postMessage({id:Number(b.getAttribute("data-id"))});});})();`;

// Theme colours only (VS Code's CSS variables), so the page follows light, dark and high-contrast themes.
const STYLE = `
body{color:var(--vscode-foreground);background:var(--vscode-editor-background);font-family:var(--vscode-font-family);font-size:var(--vscode-font-size);padding:0 20px 24px;max-width:960px}
h1{font-size:1.6em;font-weight:600;margin:16px 0 8px}h2{font-size:1.15em;font-weight:600;margin:22px 0 8px;border-bottom:1px solid var(--vscode-panel-border);padding-bottom:4px}h3{font-size:1em;font-weight:500}
code{font-family:var(--vscode-editor-font-family);background:var(--vscode-textCodeBlock-background);padding:0 3px;border-radius:3px}
.muted{color:var(--vscode-descriptionForeground)}.warn{color:var(--vscode-editorWarning-foreground)}
button{font:inherit;color:var(--vscode-button-foreground);background:var(--vscode-button-background);border:1px solid var(--vscode-button-border,transparent);border-radius:2px;padding:2px 10px;cursor:pointer}
button:hover{background:var(--vscode-button-hoverBackground)}
button:focus-visible{outline:1px solid var(--vscode-focusBorder);outline-offset:2px}
button.secondary{color:var(--vscode-button-secondaryForeground);background:var(--vscode-button-secondaryBackground)}
button.secondary:hover{background:var(--vscode-button-secondaryHoverBackground)}
button.link,button.catname,button.chip,button.num{color:var(--vscode-textLink-foreground);background:none;border:none;padding:0 2px}
button.link:hover,button.catname:hover,button.chip:hover,button.num:hover{color:var(--vscode-textLink-activeForeground);text-decoration:underline;background:none}
.switchline{display:flex;gap:12px;align-items:center;margin:8px 0}
.switch{min-width:9em;font-weight:600}.switch.off{color:var(--vscode-button-secondaryForeground);background:var(--vscode-button-secondaryBackground)}
.legend{display:flex;gap:14px;flex-wrap:wrap;margin:6px 0 10px}
.swatch{display:inline-block;width:10px;height:10px;margin-right:5px;border-radius:2px}
.chart{display:grid;gap:6px}.row{display:grid;grid-template-columns:9em 3em 1fr;align-items:center;gap:8px}
.catname{text-align:left}.total{text-align:right;font-variant-numeric:tabular-nums}
.track{background:var(--vscode-editorWidget-background);border-radius:2px;min-height:22px}
.bar{display:flex;min-width:2px;height:22px}
.seg{flex-basis:0;min-width:22px;border:none;border-radius:0;padding:0 4px;color:var(--vscode-editor-background);font-weight:600;font-size:0.85em}
.seg:hover{filter:brightness(1.15)}
.st-ok{background:var(--vscode-charts-green)}.st-stale{background:var(--vscode-charts-yellow)}.st-expiring{background:var(--vscode-charts-orange)}
.st-expired{background:var(--vscode-charts-red)}.st-quiet{background:var(--vscode-charts-purple)}
.empty{color:var(--vscode-descriptionForeground);font-size:0.85em;padding-left:6px;line-height:22px}
table{border-collapse:collapse;margin-top:12px}caption{text-align:left;color:var(--vscode-descriptionForeground);padding-bottom:4px}
th,td{padding:2px 12px 2px 0;text-align:right;font-variant-numeric:tabular-nums}th[scope=row]{text-align:left;font-weight:normal}
ul{padding-left:18px;margin:4px 0}li{margin:3px 0}ul.plain{list-style:none;padding-left:0}
.kind{font-size:0.8em;padding:0 6px;border-radius:8px;border:1px solid var(--vscode-charts-yellow)}.kind-contradiction{border-color:var(--vscode-charts-red)}
.meterline{display:grid;grid-template-columns:12em 1fr;align-items:center;gap:8px;max-width:560px;margin:4px 0}
.meter{background:var(--vscode-editorWidget-background);height:10px;border-radius:5px;overflow:hidden}
.fill{height:10px;background:var(--vscode-charts-blue)}.fill.full{background:var(--vscode-charts-red)}
`;
