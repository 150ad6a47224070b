// Drives vscode-markdown-languageserver like VS Code does: the server asks its client to find, read and
// parse the Markdown files (markdown-it tokens), so this driver answers those requests itself.
// Usage: node mdls_driver.js <node_modules> <store root> <query>...   Prints one JSON line of timings.
'use strict';
const path = require('path');
const fs = require('fs');
const cp = require('child_process');
const [modules, root, ...queries] = process.argv.slice(2);
const rpc = require(path.join(modules, 'vscode-jsonrpc/node'));
const MarkdownIt = require(path.join(modules, 'markdown-it'));
const md = new MarkdownIt({ html: true, linkify: true });
const { URI } = require(path.join(modules, 'vscode-uri'));

const t0 = process.hrtime.bigint();
const ms = () => Number(process.hrtime.bigint() - t0) / 1e6;
const server = cp.spawn(process.execPath, [path.join(modules, 'vscode-markdown-languageserver/out/node/workerMain.js'), '--stdio'],
  { stdio: ['pipe', 'pipe', 'ignore'] });
const conn = rpc.createMessageConnection(new rpc.StreamMessageReader(server.stdout), new rpc.StreamMessageWriter(server.stdin));

function walk(dir, out) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    if (e.name.startsWith('.')) continue;
    const p = path.join(dir, e.name);
    if (e.isDirectory()) walk(p, out); else if (e.name.endsWith('.md')) out.push(URI.file(p).toString());
  }
  return out;
}
conn.onRequest('markdown/findMarkdownFilesInWorkspace', () => walk(root, []));
conn.onRequest('markdown/fs/readFile', (p) => Array.from(fs.readFileSync(URI.parse(p.uri).fsPath)));
conn.onRequest('markdown/fs/stat', (p) => {
  try { return { isDirectory: fs.statSync(URI.parse(p.uri).fsPath).isDirectory() }; } catch { return undefined; }
});
conn.onRequest('markdown/fs/readDirectory', (p) => fs.readdirSync(URI.parse(p.uri).fsPath, { withFileTypes: true })
  .map((e) => [e.name, { isDirectory: e.isDirectory() }]));
conn.onRequest('markdown/parse', (p) => md.parse(p.text !== undefined ? p.text : fs.readFileSync(URI.parse(p.uri).fsPath, 'utf8'), {}));
conn.onRequest('markdown/fs/watcher/create', () => null);
conn.onRequest('markdown/fs/watcher/delete', () => null);
conn.onRequest('workspace/configuration', (p) => p.items.map(() => null));
conn.onRequest('client/registerCapability', () => null);
conn.onNotification(() => undefined);
conn.onRequest(() => null);
conn.listen();

function rss() {
  try {
    const line = fs.readFileSync(`/proc/${server.pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmHWM:'));
    return Number(line.split(/\s+/)[1]) / 1024;
  } catch { return null; }
}

(async () => {
  const rootUri = URI.file(root).toString();
  await conn.sendRequest('initialize', { processId: process.pid, rootUri, capabilities: { workspace: { symbol: {} } },
    workspaceFolders: [{ uri: rootUri, name: 'store' }], initializationOptions: { markdownFileExtensions: ['md'] } });
  conn.sendNotification('initialized', {});
  const init = ms();
  const first = ms();
  const r = await conn.sendRequest('workspace/symbol', { query: queries[0] || '' });
  const firstAnswer = ms();
  const lat = [];
  for (const q of queries.slice(1)) {
    const s = ms();
    await conn.sendRequest('workspace/symbol', { query: q });
    lat.push(ms() - s);
  }
  lat.sort((a, b) => a - b);
  const out = { initialize_ms: init, first_symbol_ms: firstAnswer, first_symbol_roundtrip_ms: firstAnswer - first,
    first_symbol_results: (r || []).length, later_symbol_p95_ms: lat.length ? lat[Math.min(lat.length - 1, Math.floor(lat.length * 0.95))] : null,
    peak_rss_mb: rss() };
  process.stdout.write(JSON.stringify(out) + '\n');
  server.kill('SIGKILL');
  process.exit(0);
})().catch((e) => { process.stdout.write(JSON.stringify({ error: String(e) }) + '\n'); server.kill('SIGKILL'); process.exit(1); });
