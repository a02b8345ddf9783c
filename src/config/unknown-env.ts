/**
 * `SIGNER_*` variables that set nothing. Convict reads only the variables its schema names, so a typo
 * (`SIGNER_ALLOWED_HOST`) would otherwise be ignored and the default used in its place: the config loader
 * refuses such a variable, naming the nearest real one, the same way it refuses an unknown key in the file.
 */
import { didYouMean } from '../util/did-you-mean';
import { isRecord } from '../util/is-record';

/** Variables read outside the config schema, by the program that reads them. */
export const OTHER_SIGNER_VARIABLES: readonly string[] = [
  // the CLIs: which config file, and the embedded default's folder
  'SIGNER_CONFIG',
  'SIGNER_VAR_DIR',
  // the service's log format (src/http/logging.ts)
  'SIGNER_LOG_PRETTY',
  // the stdio relay (sa-forge-signer-mcp), which may share an environment with the service
  'SIGNER_URL',
  'SIGNER_TOKEN',
  'SIGNER_TOKEN_FILE',
  'SIGNER_RELAY_TIMEOUT_MS',
  'SIGNER_RELAY_DRAIN_MS',
  'SIGNER_RELAY_MAX_LINE_BYTES',
];

/** Every `env` name in a convict schema, nested groups included. */
export function schemaEnvNames(schema: unknown): string[] {
  if (!isRecord(schema)) return [];
  const own = typeof schema.env === 'string' ? [schema.env] : [];
  return [
    ...own,
    ...Object.entries(schema)
      .filter(([k]) => k !== 'default')
      .flatMap(([, v]) => schemaEnvNames(v)),
  ];
}

/**
 * One message per `SIGNER_*` variable in `env` that is neither a setting nor read by another part of the signer;
 * `alsoKnown` adds names the config itself points at (ledger.url_env).
 */
export function unknownSignerVariables(
  env: NodeJS.ProcessEnv,
  settings: readonly string[],
  alsoKnown: readonly string[] = [],
): string[] {
  const known = [...settings, ...OTHER_SIGNER_VARIABLES, ...alsoKnown];
  return Object.keys(env)
    .filter((name) => name.startsWith('SIGNER_') && !known.includes(name))
    .sort()
    .map((name) => `${name}: no setting reads this variable${didYouMean(name, known)}`);
}
