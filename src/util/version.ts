/** The package version, read once (dist/src/util → ../../../package.json; src/util → ../../package.json). */
import fs from 'node:fs';
import path from 'node:path';

function readVersion(): string {
  for (const rel of ['../../package.json', '../../../package.json']) {
    try {
      const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, rel), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'sa-forge-signer' && pkg.version) return pkg.version;
    } catch {
      // try the next layout
    }
  }
  return '0.0.0';
}

export const VERSION = readVersion();
