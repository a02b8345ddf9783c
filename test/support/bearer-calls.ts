/**
 * Tool calls to a running service with a bearer of the test's choosing (a token or a credential), over plain
 * fetch, so a test sees the HTTP status a refused credential gets as well as the report an admitted one gets.
 */
import { headersFor, rpc } from '../http/support';
import { BIN, run } from './cli';

export interface BearerReply {
  status: number;
  text: string;
  json: Record<string, unknown>;
}

/** A tools/call to `http://address/mcp` with `bearer`: the status and the JSON body, whatever they are. */
export async function callWithBearer(
  address: string,
  bearer: string,
  name: string,
  args: Record<string, unknown>,
): Promise<BearerReply> {
  const body = rpc('tools/call', { name, arguments: args });
  const res = await fetch(`http://${address}/mcp`, {
    method: 'POST',
    headers: { ...headersFor(body), Authorization: `Bearer ${bearer}` },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, text, json: JSON.parse(text) as Record<string, unknown> };
}

/** The report of a call that must have reached the engine (HTTP 200); anything else fails with the body shown. */
export function reportOf(reply: BearerReply): Record<string, unknown> {
  expect({ status: reply.status, text: reply.status === 200 ? '' : reply.text }).toEqual({ status: 200, text: '' });
  return (reply.json.result as { structuredContent: Record<string, unknown> }).structuredContent;
}

/** The report fields the credential tests read. */
export interface ToolReport {
  outcome: string;
  reason?: string;
  detail: string;
  signature: string | null;
  usd_value?: string;
  figures?: Record<string, unknown>;
}

/** The report of a tools/call with `bearer` that must reach the engine (HTTP 200). */
export async function toolReport(
  address: string,
  bearer: string,
  name: string,
  args: Record<string, unknown>,
): Promise<ToolReport> {
  return reportOf(await callWithBearer(address, bearer, name, args)) as unknown as ToolReport;
}

/** The operator CLI on one config file; a command that exits non-zero throws with its stderr. */
export function cliOn(configFile: () => string) {
  return async (args: string[]): Promise<{ stdout: string; stderr: string }> => {
    const r = await run(BIN.signer, ['--config', configFile(), ...args]);
    if (r.code !== 0) throw new Error(`sa-forge-signer ${args.join(' ')}: ${r.stderr}`);
    return { stdout: r.stdout.trim(), stderr: r.stderr };
  };
}
