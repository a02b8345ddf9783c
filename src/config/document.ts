/** Reading a config document (the config file, a tokens file): YAML, or JSON for a `.json` file. */
import fs from 'node:fs';
import YAML from 'yaml';
import { fail } from './fail';

/** Reads a YAML or JSON document; YAML also reads JSON, so only `.json` is parsed strictly as JSON. */
export function readDocument(file: string): unknown {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    fail(`cannot read config file ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  try {
    if (file.endsWith('.json')) return JSON.parse(text) as unknown;
    return YAML.parse(text, { uniqueKeys: true }) as unknown;
  } catch (e) {
    fail(`config file ${file} does not parse: ${(e as Error).message.split('\n')[0]}`);
  }
}
