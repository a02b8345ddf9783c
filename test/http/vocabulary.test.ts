/**
 * One vocabulary: the outcomes, check names and reasons are defined once (src/signer/vocabulary.ts,
 * src/signer/refusals.ts). What `tools/list` serves (the real app over supertest), the `checks` and `outcomes`
 * resources, and docs/reports.md are compared here with that definition, so none of them can drift from it.
 */
import fs from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import Ajv2020 from 'ajv/dist/2020';
import { FIGURES, REASONS, REASON_NAMES, type Reason } from '../../src/signer/refusals';
import { CHECK_NAMES, OUTCOMES, PASS_NAMES } from '../../src/signer/vocabulary';
import { makeApp, headersFor, rpc, type RpcReply } from './support';

const app = makeApp();
const call = async (body: ReturnType<typeof rpc>): Promise<RpcReply> =>
  (await request(app).post('/mcp').set(headersFor(body)).send(body)).body as RpcReply;

interface Schema {
  properties: Record<string, { enum?: unknown[]; items?: { enum?: unknown[] }; properties?: object }>;
  required: string[];
}

async function reportSchemas(): Promise<Map<string, Schema>> {
  const tools = (await call(rpc('tools/list'))).result?.tools as { name: string; outputSchema: Schema }[];
  return new Map(tools.filter((t) => t.name === 'check' || t.name === 'sign').map((t) => [t.name, t.outputSchema]));
}

async function resource(uri: string): Promise<string> {
  const read = await call(rpc('resources/read', { uri }));
  return (read.result?.contents as { text: string }[])[0]!.text;
}

/** The rows of the first markdown table after `heading`: each row's cells, without their backticks. */
function tableAfter(text: string, heading: string): string[][] {
  const from = text.indexOf(heading);
  expect(from).toBeGreaterThanOrEqual(0);
  const rows: string[][] = [];
  for (const line of text.slice(from).split('\n').slice(1)) {
    if (!line.startsWith('|')) {
      if (rows.length > 0) break;
      continue;
    }
    rows.push(
      line
        .split('|')
        .slice(1, -1)
        .map((c) => c.trim().replaceAll('`', '')),
    );
  }
  return rows.slice(2); // header and separator
}

/** Every reason once, each on its check's row, with the figures it declares. */
function expectReasonRows(rows: string[][]): void {
  const names = rows.map((r) => r[0]);
  expect([...names].sort()).toEqual([...REASON_NAMES].sort());
  for (const [name, check, ...rest] of rows) {
    const spec = REASONS[name as Reason];
    expect({ name, check }).toEqual({ name, check: spec.check ?? '–' });
    const figures = rest[rest.length - 1];
    expect({ name, figures }).toEqual({ name, figures: spec.figures.length === 0 ? '–' : spec.figures.join(', ') });
  }
}

test("tools/list: check's and sign's output schemas list exactly the defined outcomes, checks, reasons and figures", async () => {
  const schemas = await reportSchemas();
  expect([...schemas.keys()]).toEqual(['check', 'sign']);
  const ajv = new Ajv2020({ strict: true, strictTypes: false });
  for (const schema of schemas.values()) {
    expect(ajv.validateSchema(schema)).toBe(true);
    expect(() => ajv.compile(schema)).not.toThrow();
    const p = schema.properties;
    expect(p.outcome!.enum).toEqual([...OUTCOMES]);
    expect(p.failed_check!.enum).toEqual([...CHECK_NAMES, null]);
    expect(p.checks!.items!.enum).toEqual([...PASS_NAMES]);
    expect(p.reason!.enum).toEqual([...REASON_NAMES, null]);
    expect(Object.keys(p.figures!.properties!)).toEqual(Object.keys(FIGURES));
    expect([...schema.required].sort()).toEqual(Object.keys(p).sort());
  }
});

test('every reason names a defined check (or none, for the one outcome that is not a refusal)', () => {
  for (const name of REASON_NAMES) {
    const { check, figures } = REASONS[name];
    if (check === null) expect(name).toBe('simulation_failed');
    else expect(CHECK_NAMES).toContain(check);
    for (const f of figures) expect(Object.keys(FIGURES)).toContain(f);
  }
  // Every check that can refuse has at least one reason.
  expect(new Set(REASON_NAMES.map((r) => REASONS[r].check).filter((c) => c !== null))).toEqual(new Set(CHECK_NAMES));
});

test('the checks resource names every check and lists every reason exactly once, on its check', async () => {
  const text = await resource('signer://docs/checks');
  for (const check of CHECK_NAMES) expect(text).toContain(`\`${check}\``);
  for (const name of PASS_NAMES) expect(text).toContain(name);
  expectReasonRows(tableAfter(text, '## Reasons'));
});

test('the outcomes resource has one row per outcome', async () => {
  const rows = tableAfter(await resource('signer://docs/outcomes'), '# Outcomes');
  expect(rows.map((r) => r[0]).sort()).toEqual([...OUTCOMES].sort());
});

test('docs/reports.md lists every reason exactly once, on its check, and every outcome and report field', async () => {
  const doc = fs.readFileSync(path.join(__dirname, '../../docs/reports.md'), 'utf8');
  expectReasonRows(tableAfter(doc, '## Reasons'));
  const outcomes = tableAfter(doc, '## Outcomes and CLI exit codes').map((r) => r[0]);
  for (const o of OUTCOMES) expect(outcomes).toContain(o);
  const fields = tableAfter(doc, '# Reports').map((r) => r[0]);
  const schema = (await reportSchemas()).get('check')!;
  expect(fields).toEqual(schema.required);
});
