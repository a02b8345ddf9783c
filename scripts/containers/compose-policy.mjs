// Project policy on compose.yaml as docker-compose resolves it (`docker-compose --profile replicas config` on stdin):
// hardening and wiring that `config -q` cannot judge. Prints ok/FAIL lines and `compose-policy: N passed, N failed`.
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';

const cfg = parse(readFileSync(0, 'utf8'));
const svc = cfg.services ?? {};
const results = [];
const check = (name, fn) => {
  try {
    const why = fn();
    results.push({ name, ok: why === true, why: why === true ? '' : String(why) });
  } catch (e) {
    results.push({ name, ok: false, why: e.message });
  }
};
const signers = ['signer', 'signer-a', 'signer-b'];
const ourImages = [...signers, 'relay'];
const secretTargets = (s) => (s.secrets ?? []).map((x) => x.target ?? `/run/secrets/${x.source}`);
const seconds = (d) =>
  [...String(d).matchAll(/(\d+)(h|m|s)/g)].reduce((t, [, n, u]) => t + Number(n) * { h: 3600, m: 60, s: 1 }[u], 0);

check(
  'services signer, relay, postgres, signer-a, signer-b exist',
  () => ['signer', 'relay', 'postgres', 'signer-a', 'signer-b'].every((n) => svc[n]) || Object.keys(svc).join(','),
);
for (const n of ourImages) {
  const s = svc[n];
  check(
    `${n}: uid 10001, read-only root, cap_drop ALL, no-new-privileges, not privileged`,
    () =>
      (s.user === '10001:10001' &&
        s.read_only === true &&
        s.cap_drop?.includes('ALL') &&
        !s.cap_add &&
        s.security_opt?.some((o) => o.startsWith('no-new-privileges')) &&
        !s.privileged) ||
      JSON.stringify({ user: s.user, ro: s.read_only, cap: s.cap_drop }),
  );
}
for (const n of signers) {
  const s = svc[n];
  check(
    `${n}: ports published on 127.0.0.1 only`,
    () => (s.ports?.length > 0 && s.ports.every((p) => String(p).startsWith('127.0.0.1:'))) || JSON.stringify(s.ports),
  );
  check(
    `${n}: stop_grace_period >= 230s (220 s drain)`,
    () => seconds(s.stop_grace_period) >= 230 || s.stop_grace_period,
  );
  check(
    `${n}: exec-form healthcheck on /health`,
    () =>
      (s.healthcheck?.test?.[0] === 'CMD' && s.healthcheck.test.join(' ').includes('/health')) ||
      JSON.stringify(s.healthcheck),
  );
  check(
    `${n}: config mounted read-only at /etc/sa-forge-signer/config.yaml`,
    () =>
      (s.volumes ?? []).some((v) => /:\/etc\/sa-forge-signer\/config\.yaml:ro$/.test(v)) || JSON.stringify(s.volumes),
  );
  check(`${n}: keys and token hashes come as secrets`, () => {
    const t = secretTargets(s);
    return (t.includes('/run/keys') && t.includes('/run/secrets/signer_tokens')) || t.join(',');
  });
  check(`${n}: no host networking`, () => !s.network_mode || s.network_mode);
}
check(
  'signer: SQLite state on a named volume at /var/lib/sa-forge-signer',
  () =>
    svc.signer.volumes.some((v) => /^signer-state:\/var\/lib\/sa-forge-signer(:rw)?$/.test(v)) ||
    JSON.stringify(svc.signer.volumes),
);
check(
  'signer: in the default profile (docker compose up starts it)',
  () => !svc.signer.profiles || JSON.stringify(svc.signer.profiles),
);
check(
  "relay: sa-forge-signer-mcp on stdin, on the signer's loopback, token from a secret",
  () =>
    (svc.relay.command?.[0] === 'sa-forge-signer-mcp' &&
      svc.relay.stdin_open === true &&
      svc.relay.network_mode === 'service:signer' &&
      svc.relay.environment?.SIGNER_URL === 'http://127.0.0.1:8790/mcp' &&
      secretTargets(svc.relay).includes(svc.relay.environment?.SIGNER_TOKEN_FILE)) ||
    'relay wiring',
);
check(
  'profile replicas: postgres pinned by digest, not published, password from a secret',
  () =>
    (/@sha256:[0-9a-f]{64}$/.test(svc.postgres.image) &&
      !svc.postgres.ports &&
      svc.postgres.environment?.POSTGRES_PASSWORD_FILE &&
      svc.postgres.profiles?.includes('replicas')) ||
    'postgres',
);
check(
  'profile replicas: both replicas wait for a healthy postgres and read the ledger URL from a secret',
  () =>
    ['signer-a', 'signer-b'].every(
      (n) =>
        svc[n].profiles?.includes('replicas') &&
        svc[n].depends_on?.postgres?.condition === 'service_healthy' &&
        secretTargets(svc[n]).includes('/run/secrets/ledger_url'),
    ) || 'replica wiring',
);
check(
  'profile replicas: the replicas use the PostgreSQL config',
  () =>
    ['signer-a', 'signer-b'].every((n) => svc[n].volumes.some((v) => v.includes('config.replicas.yaml:'))) ||
    'replica config',
);

for (const r of results) console.log(`${r.ok ? 'ok  ' : 'FAIL'} ${r.name}${r.ok ? '' : `: ${r.why}`}`);
const failed = results.filter((r) => !r.ok).length;
console.log(`compose-policy: ${results.length - failed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
