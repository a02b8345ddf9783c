/**
 * `sa-forge-signer reload`: the running service on the config's state directory reads its config again
 * (docs/policy.md, "Reload"). The answer is the service's: applied (with the policy hashes and what changed),
 * unchanged, or refused with the reason; exit 0, 0 and 1.
 */
import type { SignerConfig } from '../config/types';
import { SignerError, isSignerError } from '../util/errors';
import { showUntrusted } from '../util/untrusted';
import { err, out, outJson } from './context';
import { requestReload } from './reload-files';
import { serviceHolder } from './service-lock';

/** Long enough for the service to read every mint from a slow RPC endpoint (its own timeout is 15 s a call). */
const ANSWER_TIMEOUT_MS = 60_000;

export async function reloadCommand(load: () => SignerConfig, json: boolean): Promise<number> {
  let cfg: SignerConfig;
  try {
    cfg = load();
  } catch (e) {
    // The config the service would read does not load here either: the service would refuse it the same way, and
    // it cannot be asked without the state directory the config names.
    if (!isSignerError(e) || e.code !== 'config_invalid') throw e;
    const message = `reload refused, nothing changed: ${e.message}`;
    if (json) outJson({ status: 'refused', message, old_hash: null, new_hash: null, changes: [], request: null });
    else out(showUntrusted(message, 4000));
    return 1;
  }
  const holder = serviceHolder(cfg.state_dir);
  if (!holder.held)
    throw new SignerError(
      'request_invalid',
      `no sa-forge-signer service runs on the state directory ${cfg.state_dir}: nothing to reload (a service reads its config when it starts)`,
    );
  if (holder.info === null)
    throw new SignerError('request_invalid', 'the service on this state directory is still starting; try again');
  const answer = await requestReload(cfg.state_dir, holder.info.pid, ANSWER_TIMEOUT_MS);
  if (json) outJson(answer);
  else {
    // The reason can quote the config (a key name, a mint): shown escaped.
    out(showUntrusted(answer.message, 4000));
    if (answer.status !== 'refused') err(`policy hash: ${answer.old_hash} → ${answer.new_hash ?? answer.old_hash}`);
  }
  return answer.status === 'refused' ? 1 : 0;
}
