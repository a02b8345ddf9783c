/**
 * `sa-forge-signer operator enroll|list|revoke`: operators' passkeys for the console (docs/operators.md). An
 * enrollment link is printed once on stdout; only its hash is stored.
 */
import type { SignerConfig } from '../config/types';
import { createEnrollment } from '../operator/enrollment';
import { consoleOrigin, enrollmentUrl } from '../operator/origin';
import { SignerError } from '../util/errors';
import { didYouMean } from '../util/did-you-mean';
import { nowSeconds } from '../util/time';
import { flag, requirePositional, type ParsedArgs } from './args';
import { usageOf } from './commands';
import { config, err, out, outJson, withLedger } from './context';

const OPERATOR_NAME = /^[a-z0-9_-]{1,32}$/;
const iso = (s: number | null): string => (s === null ? 'never' : new Date(s * 1000).toISOString());

function configuredOperator(cfg: SignerConfig, name: string) {
  const operators = cfg.operators ?? [];
  const found = operators.find((o) => o.name === name);
  if (!found)
    throw new SignerError(
      'request_invalid',
      `no operator ${JSON.stringify(name)} under operators in the config${didYouMean(
        name,
        operators.map((o) => o.name),
        (n) => JSON.stringify(n),
      )}; add {name: ${name}, role: approver|admin} there first`,
    );
  return found;
}

async function enroll(args: ParsedArgs): Promise<number> {
  const name = requirePositional(args, 2, 'an operator name', usageOf('operator enroll'));
  const cfg = config(args);
  const operator = configuredOperator(cfg, name);
  const op = cfg.serve.operator;
  if (!op)
    throw new SignerError(
      'config_invalid',
      'the operator console is off: set serve.operator.listen (e.g. 127.0.0.1:8788) and restart the service',
    );
  if (op.public_url === null && op.listen.port === 0)
    throw new SignerError(
      'config_invalid',
      'serve.operator.listen has port 0, so the link cannot name the port: set a fixed port or serve.operator.public_url',
    );
  const origin = consoleOrigin(op, op.listen.port);
  return withLedger(cfg, async (ledger) => {
    const { token, expiresAt } = await createEnrollment(ledger, operator.name, op.enrollment_ttl_ms, nowSeconds());
    out(enrollmentUrl(origin, token));
    err(
      `one-time enrollment link for operator ${operator.name} (${operator.role}), usable once until ${iso(expiresAt)}: ` +
        'give it to them privately; they open it in the browser they will approve with and register a passkey',
    );
    return 0;
  });
}

async function list(args: ParsedArgs): Promise<number> {
  const cfg = config(args);
  const operators = cfg.operators ?? [];
  return withLedger(cfg, async (ledger) => {
    const passkeys = await ledger.listPasskeys();
    const standings = await ledger.operatorStandings();
    const revokedAt = (name: string): number | null => {
      const s = standings.find((x) => x.operator === name);
      return s && s.reinstated_at === null ? s.revoked_at : null;
    };
    const names = [...new Set([...operators.map((o) => o.name), ...passkeys.map((p) => p.operator)])];
    const rows = names.map((name) => ({
      name,
      role: operators.find((o) => o.name === name)?.role ?? null,
      revoked_at: revokedAt(name),
      passkeys: passkeys
        .filter((p) => p.operator === name)
        .map((p) => ({ credential_id: p.credential_id, created_at: p.created_at, last_used_at: p.last_used_at })),
    }));
    if (flag(args, 'json')) outJson(rows);
    else if (rows.length === 0) err('no operators: add {name, role} entries under operators in the config');
    else
      out(
        rows
          .map((r) =>
            [
              `${r.name}  ${r.role ?? 'not in the config (its passkeys open nothing; operator revoke removes them)'}  ${String(r.passkeys.length)} passkey(s)${r.revoked_at === null ? '' : `  revoked ${iso(r.revoked_at)} (its votes do not count; operator enroll reinstates)`}`,
              ...r.passkeys.map(
                (p) => `    ${p.credential_id}  enrolled ${iso(p.created_at)}  last used ${iso(p.last_used_at)}`,
              ),
            ].join('\n'),
          )
          .join('\n'),
      );
    return 0;
  });
}

async function revoke(args: ParsedArgs): Promise<number> {
  const name = requirePositional(args, 2, 'an operator name', usageOf('operator revoke'));
  if (!OPERATOR_NAME.test(name))
    throw new SignerError('request_invalid', `operator names are 1 to 32 lowercase letters, digits, '-' or '_'`);
  return withLedger(config(args), async (ledger) => {
    const { passkeys, sessions } = await ledger.revokeOperator(name, nowSeconds());
    err(
      `revoked ${name}: removed ${String(passkeys)} passkey(s), their unused enrollment links and ${String(sessions)} ` +
        'console session(s) (ended at once, in every replica); none of their votes counts any more, on any ' +
        'approval, until a new enrollment (sa-forge-signer operator enroll NAME) reinstates them, and then only ' +
        'votes cast after it',
    );
    return 0;
  });
}

export function operatorCommand(sub: string, args: ParsedArgs): Promise<number> {
  if (sub === 'enroll') return enroll(args);
  if (sub === 'list') return list(args);
  return revoke(args);
}
