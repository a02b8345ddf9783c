// MCP 2026-07-28 probes against the containerised signer, as a client sees it. Prints `ok`/`FAIL` lines, exit 1 on
// any failure.
//   node mcp-probe.mjs http URL TOKEN_FILE            tools/list over Streamable HTTP (+ 401 without the token)
//   node mcp-probe.mjs stdio KEY PUBKEY -- CMD ARGS...   start CMD (the relay), then over its stdin/stdout:
//                                                     server/discover, tools/list, tools/call key_show {key}
//   node mcp-probe.mjs call URL TOKEN_FILE TOOL ARGS_JSON   one tools/call over HTTP; prints its structuredContent
//   node mcp-probe.mjs race TOKEN_FILE KEY PUBKEY DEST LAMPORTS N K CAP URL...   N concurrent transfer signs over
//                                                     the replicas at URL...; exactly K confirm, the rest refused
//                                                     by the daily cap (see race below)
import { readFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

const VERSION = '2026-07-28';
const meta = {
  'io.modelcontextprotocol/protocolVersion': VERSION,
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'sa-forge-signer-container-probe', version: '1.0.0' },
};
const EXPECTED_TOOLS = ['check', 'sign', 'key_show', 'halt'];
let failures = 0;
const report = (ok, what, detail = '') => {
  if (!ok) failures++;
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}${detail ? `: ${detail}` : ''}`);
};
const brief = (v) => JSON.stringify(v)?.slice(0, 300);

async function http(url, tokenFile) {
  const token = readFileSync(tokenFile, 'utf8').trim();
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: meta } });
  const headers = {
    'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream',
    'MCP-Protocol-Version': VERSION,
    'Mcp-Method': 'tools/list',
  };
  const anon = await fetch(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(10_000) });
  report(anon.status === 401, 'POST /mcp without a token is refused with 401', `status ${anon.status}`);
  const t0 = performance.now();
  const res = await fetch(url, {
    method: 'POST',
    headers: { ...headers, Authorization: `Bearer ${token}` },
    body,
    signal: AbortSignal.timeout(10_000),
  });
  const ms = (performance.now() - t0).toFixed(1);
  const text = await res.text();
  let msg = null;
  try {
    msg = JSON.parse(text);
  } catch {
    /* reported below */
  }
  const names = msg?.result?.tools?.map((t) => t.name) ?? [];
  report(
    res.status === 200 && EXPECTED_TOOLS.every((n) => names.includes(n)),
    `tools/list with the bearer token lists ${EXPECTED_TOOLS.join(', ')} (${ms} ms)`,
    res.status === 200 ? `tools ${names}` : `status ${res.status} ${text.slice(0, 200)}`,
  );
}

async function stdio(key, pubkey, cmd) {
  const child = spawn(cmd[0], cmd.slice(1), { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => {
    stderr += d;
  });
  const pending = new Map();
  const lines = createInterface({ input: child.stdout });
  const nonJson = [];
  lines.on('line', (line) => {
    let msg;
    try {
      msg = JSON.parse(line);
    } catch {
      nonJson.push(line);
      return;
    }
    pending.get(msg.id)?.(msg);
  });
  // a relay that dies answers nothing: fail its pending requests at once instead of waiting for the timeout
  let exitCode = null;
  const exited = new Promise((res) =>
    child.on('exit', (code) => {
      exitCode = code;
      for (const [, settle] of pending) settle({ exited: code, stderr: stderr.slice(-300) });
      res(code);
    }),
  );
  const request = (id, method, params) =>
    new Promise((resolve) => {
      if (exitCode !== null) return resolve({ exited: exitCode, stderr: stderr.slice(-300) });
      const timer = setTimeout(() => {
        pending.delete(id);
        resolve({ timeout: true });
      }, 60_000);
      pending.set(id, (msg) => {
        clearTimeout(timer);
        pending.delete(id);
        resolve(msg);
      });
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta: meta } })}\n`);
    });
  const t0 = performance.now();
  const discover = await request('discover-1', 'server/discover', {});
  report(
    discover.result?.supportedVersions?.includes(VERSION),
    `server/discover over stdio answers (${(performance.now() - t0).toFixed(0)} ms incl. container start)`,
    brief(discover.error ?? discover.result ?? discover),
  );
  const list = await request(2, 'tools/list', {});
  const names = list.result?.tools?.map((t) => t.name) ?? [];
  report(
    EXPECTED_TOOLS.every((n) => names.includes(n)),
    'tools/list over stdio',
    brief(names.length ? names : list),
  );
  const call = await request(3, 'tools/call', { name: 'key_show', arguments: { key } });
  const keys = call.result?.structuredContent?.keys ?? [];
  report(
    call.result && call.result.isError !== true && keys[0]?.pubkey === pubkey,
    `tools/call key_show {key: ${key}} over stdio returns the key's pubkey`,
    brief(
      call.error ?? (keys[0] ? { pubkey: keys[0].pubkey, balance: keys[0].balance_lamports ?? keys[0].balance } : call),
    ),
  );
  report(nonJson.length === 0, 'stdout carries only JSON-RPC lines', nonJson.slice(0, 2).join(' | '));
  child.stdin.end();
  const code = await Promise.race([exited, new Promise((r) => setTimeout(() => r('timeout'), 20_000))]);
  report(
    code === 0,
    'the relay exits 0 at end of input',
    `exit ${code}${stderr ? `; stderr: ${stderr.slice(-300)}` : ''}`,
  );
  if (code === 'timeout') child.kill('SIGKILL');
}

/** One tools/call over HTTP: the HTTP status and the parsed JSON-RPC answer (null when it is not JSON). */
async function toolCall(url, token, tool, args) {
  const headers = {
    'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream',
    Authorization: `Bearer ${token}`,
    'MCP-Protocol-Version': VERSION,
    'Mcp-Method': 'tools/call',
    'Mcp-Name': tool,
  };
  // SEP-2243: the annotated `key` argument travels in a header too
  if (typeof args.key === 'string') headers['Mcp-Param-Key'] = args.key;
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name: tool, arguments: args, _meta: meta },
  });
  const res = await fetch(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(60_000) });
  const text = await res.text();
  let msg = null;
  try {
    msg = JSON.parse(text);
  } catch {
    /* the caller reports the text */
  }
  return { status: res.status, msg, text };
}

async function call(url, tokenFile, tool, argsJson) {
  const token = readFileSync(tokenFile, 'utf8').trim();
  const { status, msg, text } = await toolCall(url, token, tool, JSON.parse(argsJson));
  if (status !== 200 || !msg?.result || msg.result.isError) {
    report(false, `tools/call ${tool}`, `status ${status} ${text.slice(0, 300)}`);
    return;
  }
  console.log(JSON.stringify(msg.result.structuredContent));
}

/** A version-1 payload: one System Program transfer of `lamports` from the key (fee payer) to `to`. */
function transferPayload(from, to, lamports, summary) {
  const data = Buffer.alloc(12);
  data.writeUInt32LE(2, 0); // SystemInstruction::Transfer
  data.writeBigUInt64LE(BigInt(lamports), 4);
  const system = '11111111111111111111111111111111';
  const accounts = [
    { pubkey: from, is_signer: true, is_writable: true },
    { pubkey: to, is_signer: false, is_writable: true },
  ];
  return {
    version: 1,
    summary,
    warnings: [],
    transaction: { fee_payer: from, instructions: [{ program_id: system, accounts, data: [...data] }] },
  };
}

// N signs at once, spread round-robin over the replicas, for a key whose daily cap admits exactly K: exactly K
// confirm and every other one is refused by the `limits` check, whichever replica took it. A `check` first shows
// what one sign reserves, so K * reservation <= cap < (K + 1) * reservation is checked, not assumed.
async function race(tokenFile, key, from, to, lamports, n, k, cap, urls) {
  const token = readFileSync(tokenFile, 'utf8').trim();
  const probe = await toolCall(urls[0], token, 'check', { key, payload: transferPayload(from, to, lamports, 'probe') });
  const p = probe.msg?.result?.structuredContent;
  const reservation = p ? -p.balance_change + p.fee : NaN;
  report(
    p?.outcome === 'ok' && k * reservation <= cap && cap < (k + 1) * reservation,
    `check: one sign reserves ${reservation} lamports, so the cap of ${cap} admits exactly ${k}`,
    p ? '' : probe.text.slice(0, 300),
  );
  const t0 = performance.now();
  const replies = await Promise.all(
    Array.from({ length: n }, async (_, i) => {
      const replica = i % urls.length;
      const r = await toolCall(urls[replica], token, 'sign', {
        key,
        // Each its own amount: identical transfers in one block are one transaction, which the signer refuses to
        // sign twice while the first has no outcome. A few lamports more stay well inside the cap's half-sign margin.
        payload: transferPayload(from, to, lamports + i, `compose replicas race ${i}`),
      });
      return { replica, status: r.status, rep: r.msg?.result?.structuredContent, text: r.text };
    }),
  );
  const ms = (performance.now() - t0).toFixed(0);
  const confirmed = replies.filter((r) => r.rep?.outcome === 'confirmed');
  const refused = replies.filter((r) => r.rep?.outcome === 'refused');
  const other = replies.filter((r) => !confirmed.includes(r) && !refused.includes(r));
  const perReplica = urls.map((_, i) => {
    const mine = replies.filter((r) => r.replica === i);
    return `replica ${i}: ${mine.filter((r) => confirmed.includes(r)).length} confirmed / ${mine.length}`;
  });
  report(
    confirmed.length === k && new Set(confirmed.map((r) => r.rep.signature)).size === k,
    `${n} concurrent signs over ${urls.length} replicas in ${ms} ms: exactly ${k} confirmed, each with its own signature`,
    `${confirmed.length} confirmed (${perReplica.join(', ')})`,
  );
  const badRefusals = refused.filter(
    (r) => r.rep.failed_check !== 'limits' || !/daily cap/.test(r.rep.detail ?? '') || r.rep.signature != null,
  );
  report(
    refused.length === n - k && badRefusals.length === 0,
    `the other ${n - k} refused by the limits check (daily cap), with no signature`,
    `${refused.length} refused${badRefusals.length ? `; ${brief(badRefusals[0].rep)}` : ''}`,
  );
  report(other.length === 0, 'every sign answered confirmed or refused', brief(other[0]?.text?.slice(0, 300)));
}

const [mode, ...rest] = process.argv.slice(2);
try {
  if (mode === 'http') await http(rest[0], rest[1]);
  else if (mode === 'call') await call(rest[0], rest[1], rest[2], rest[3]);
  else if (mode === 'race') {
    const [tokenFile, key, from, to, lamports, n, k, cap, ...urls] = rest;
    await race(tokenFile, key, from, to, Number(lamports), Number(n), Number(k), Number(cap), urls);
  } else if (mode === 'stdio') {
    const dd = rest.indexOf('--');
    await stdio(rest[0], rest[1], rest.slice(dd + 1));
  } else throw new Error(`unknown mode ${mode}`);
} catch (e) {
  report(false, `${mode} probe`, e.message);
}
process.exit(failures ? 1 : 0);
