// Project policy on the rendered kustomize output of deploy/base, deploy/overlays/postgres and (optionally)
// deploy/overlays/postgres-ha: the hardening and wiring the Kubernetes schemas cannot express.
// Usage: node k8s-policy.mjs BASE.yaml OVERLAY.yaml [HA-OVERLAY.yaml]
import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';

const [baseFile, overlayFile, haFile] = process.argv.slice(2);
const load = (f) =>
  parseAllDocuments(readFileSync(f, 'utf8'))
    .map((d) => d.toJS())
    .filter(Boolean);
const results = [];
const check = (name, fn) => {
  // fn returns true, or a description of what it found instead
  try {
    const why = fn();
    results.push({ name, ok: why === true, why: why === true ? '' : String(why) });
  } catch (e) {
    results.push({ name, ok: false, why: e.message });
  }
};
const matches = (selector, labels) => Object.entries(selector ?? {}).every(([k, v]) => labels?.[k] === v);

for (const [variant, file] of [
  ['base', baseFile],
  ['postgres', overlayFile],
  ...(haFile ? [['postgres-ha', haFile]] : []),
]) {
  const objs = load(file);
  const find = (kind, name) => objs.find((o) => o.kind === kind && (name === undefined || o.metadata.name === name));
  const dep = find('Deployment', 'sa-forge-signer');
  const pod = dep?.spec.template.spec;
  const podLabels = dep?.spec.template.metadata.labels;
  const all = [...(pod?.initContainers ?? []), ...(pod?.containers ?? [])];
  const signer = pod?.containers.find((c) => c.name === 'signer');
  const t = (name, fn) => check(`${variant}: ${name}`, fn);

  t(
    'Deployment exists with a signer container',
    () => !!signer || 'no Deployment/sa-forge-signer with container signer',
  );
  t(
    'pod runs as non-root uid 10001 with seccomp RuntimeDefault',
    () =>
      (pod.securityContext.runAsNonRoot === true &&
        pod.securityContext.runAsUser === 10001 &&
        pod.securityContext.seccompProfile?.type === 'RuntimeDefault') ||
      JSON.stringify(pod.securityContext),
  );
  for (const c of all) {
    t(`container ${c.name}: read-only root, no privilege escalation, drop ALL, uid 10001`, () => {
      const s = c.securityContext ?? {};
      return (
        (s.readOnlyRootFilesystem === true &&
          s.allowPrivilegeEscalation === false &&
          s.runAsNonRoot === true &&
          s.runAsUser === 10001 &&
          s.capabilities?.drop?.includes('ALL') &&
          !s.capabilities?.add?.length &&
          s.seccompProfile?.type === 'RuntimeDefault') ||
        JSON.stringify(s)
      );
    });
    t(
      `container ${c.name}: cpu/memory requests and a memory limit`,
      () =>
        !!(c.resources?.requests?.cpu && c.resources?.requests?.memory && c.resources?.limits?.memory) ||
        JSON.stringify(c.resources),
    );
  }
  t(
    'liveness GET /health, readiness GET /ready on the http port',
    () =>
      (signer.livenessProbe?.httpGet?.path === '/health' &&
        signer.readinessProbe?.httpGet?.path === '/ready' &&
        signer.livenessProbe.httpGet.port === 'http' &&
        signer.ports.some((p) => p.name === 'http' && p.containerPort === 8790)) ||
      'probe paths/ports differ',
  );
  t(
    'terminationGracePeriodSeconds >= 230 (220 s drain)',
    () => pod.terminationGracePeriodSeconds >= 230 || pod.terminationGracePeriodSeconds,
  );
  t('no service account token anywhere', () => {
    const sa = find('ServiceAccount', pod.serviceAccountName);
    return (
      (sa?.automountServiceAccountToken === false && pod.automountServiceAccountToken === false) ||
      'automount not false'
    );
  });
  t('config, keys and tokens are mounted read-only; keys at /run/keys', () => {
    const m = Object.fromEntries(signer.volumeMounts.map((v) => [v.mountPath, v]));
    return (
      !!(
        m['/etc/sa-forge-signer']?.readOnly &&
        m['/run/keys']?.readOnly &&
        m['/run/secrets/sa-forge-signer']?.readOnly &&
        m['/var/lib/sa-forge-signer'] &&
        !m['/var/lib/sa-forge-signer'].readOnly
      ) || JSON.stringify(Object.keys(m))
    );
  });
  t(
    'keys are copied to a memory-backed volume, never a disk',
    () =>
      pod.volumes.find((v) => v.name === 'keys')?.emptyDir?.medium === 'Memory' || 'keys volume is not emptyDir Memory',
  );
  t("the key stores' passphrase and PIN come from a Secret mounted read-only, never from the config", () => {
    const v = pod.volumes.find((x) => x.secret?.secretName === 'sa-forge-signer-key-stores');
    const m = signer.volumeMounts.find((x) => x.name === v?.name);
    return (v !== undefined && m?.readOnly === true) || 'no read-only mount of Secret sa-forge-signer-key-stores';
  });
  t('every ConfigMap, Secret and PVC a pod uses is rendered or has a template', () => {
    const templates = [
      'sa-forge-signer-keys',
      'sa-forge-signer-tokens',
      'sa-forge-signer-key-stores',
      'sa-forge-signer-ledger',
      'sa-forge-signer-postgres',
      // CloudNativePG makes each Cluster's application Secret (its `uri` is the read-write Service's URL)
      ...objs.filter((o) => o.kind === 'Cluster').map((o) => `${o.metadata.name}-app`),
    ];
    const missing = [];
    for (const o of objs.filter((x) => ['Deployment', 'StatefulSet'].includes(x.kind))) {
      for (const v of o.spec.template.spec.volumes ?? []) {
        if (v.configMap && !find('ConfigMap', v.configMap.name)) missing.push(`ConfigMap ${v.configMap.name}`);
        if (v.secret && !templates.includes(v.secret.secretName)) missing.push(`Secret ${v.secret.secretName}`);
        if (v.persistentVolumeClaim && !find('PersistentVolumeClaim', v.persistentVolumeClaim.claimName))
          missing.push(`PVC ${v.persistentVolumeClaim.claimName}`);
      }
    }
    return missing.length === 0 || missing.join(', ');
  });
  t('Service selects the signer pods and only them', () => {
    const svc = find('Service', 'sa-forge-signer');
    return (
      (matches(svc.spec.selector, podLabels) && svc.spec.selector['app.kubernetes.io/component'] === 'signer') ||
      JSON.stringify(svc.spec.selector)
    );
  });
  t('PodDisruptionBudget selects the signer pods', () => {
    const pdb = find('PodDisruptionBudget', 'sa-forge-signer');
    return !!(pdb && matches(pdb.spec.selector.matchLabels, podLabels)) || 'no matching PDB';
  });
  t('NetworkPolicy: ingress only from agent (8790) and metrics (9791) pods; egress DNS + HTTPS only', () => {
    const np = find('NetworkPolicy', 'sa-forge-signer');
    if (!matches(np.spec.podSelector.matchLabels, podLabels)) return 'podSelector does not select the signer';
    if (!(np.spec.policyTypes.includes('Ingress') && np.spec.policyTypes.includes('Egress'))) return 'policyTypes';
    const ing = np.spec.ingress.map(
      (r) => `${JSON.stringify(r.from[0].podSelector.matchLabels)}:${r.ports.map((p) => p.port)}`,
    );
    if (ing.join('|') !== '{"sa-forge-signer/agent":"true"}:8790|{"sa-forge-signer/metrics":"true"}:9791')
      return ing.join('|');
    const ports = np.spec.egress
      .flatMap((r) => r.ports.map((p) => `${p.protocol}/${p.port}`))
      .sort()
      .join(',');
    const want = (variant === 'base' ? ['TCP/443', 'TCP/53', 'UDP/53'] : ['TCP/443', 'TCP/5432', 'TCP/53', 'UDP/53'])
      .sort()
      .join(',');
    return ports === want || `egress ports ${ports}, want ${want}`;
  });
  if (variant === 'base') {
    t(
      'one replica with Recreate (SQLite has one writer)',
      () => (dep.spec.replicas === 1 && dep.spec.strategy.type === 'Recreate') || JSON.stringify(dep.spec.strategy),
    );
    t(
      'SQLite state on a PersistentVolumeClaim',
      () => !!pod.volumes.find((v) => v.name === 'state')?.persistentVolumeClaim || 'state is not a PVC',
    );
  } else {
    t(
      'two replicas, rolling without losing capacity',
      () =>
        (dep.spec.replicas === 2 &&
          dep.spec.strategy.type === 'RollingUpdate' &&
          dep.spec.strategy.rollingUpdate.maxUnavailable === 0) ||
        JSON.stringify(dep.spec.strategy),
    );
    t('ledger URL from a Secret file, config says postgres', () => {
      const cm = find('ConfigMap');
      const cfg = cm.data['config.yaml'];
      const m = signer.volumeMounts.find((v) => v.mountPath === '/run/secrets/sa-forge-signer-ledger');
      return (
        !!(
          /store:\s*postgres/.test(cfg) &&
          /url_file:\s*\/run\/secrets\/sa-forge-signer-ledger\/(url|uri)\b/.test(cfg) &&
          m?.readOnly
        ) || 'ledger wiring'
      );
    });
    t('no SQLite PVC left', () => !find('PersistentVolumeClaim') || 'a PersistentVolumeClaim is still rendered');
    if (variant === 'postgres-ha') {
      t('a CloudNativePG Cluster of three instances with one synchronous standby, commits waiting for it', () => {
        const c = find('Cluster');
        return (
          (c?.spec.instances === 3 &&
            c.spec.minSyncReplicas === 1 &&
            c.spec.maxSyncReplicas === 1 &&
            ['on', 'remote_apply'].includes(c.spec.postgresql?.parameters?.synchronous_commit)) ||
          JSON.stringify(c?.spec)
        );
      });
      t("the ledger Secret is the Cluster's application Secret (the read-write Service's URL)", () => {
        const c = find('Cluster');
        const v = pod.volumes.find((x) => x.name === 'ledger');
        return v?.secret?.secretName === `${c?.metadata.name}-app` || JSON.stringify(v);
      });
      t("egress on 5432 only to the Cluster's pods", () => {
        const np = find('NetworkPolicy', 'sa-forge-signer');
        const rules = np.spec.egress.filter((r) => r.ports.some((p) => p.port === 5432));
        const c = find('Cluster');
        return (
          (rules.length === 1 && rules[0].to[0].podSelector.matchLabels['cnpg.io/cluster'] === c?.metadata.name) ||
          JSON.stringify(rules)
        );
      });
      continue;
    }
    t('PostgreSQL reachable only from signer pods', () => {
      const np = find('NetworkPolicy', 'sa-forge-signer-postgres');
      return (
        (np.spec.ingress.length === 1 &&
          np.spec.ingress[0].from[0].podSelector.matchLabels['app.kubernetes.io/component'] === 'signer') ||
        'postgres policy'
      );
    });
  }
}
for (const r of results) console.log(`${r.ok ? 'ok  ' : 'FAIL'} ${r.name}${r.ok ? '' : `: ${r.why}`}`);
const failed = results.filter((r) => !r.ok).length;
console.log(`k8s-policy: ${results.length - failed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
