/**
 * The Kubernetes manifests (deploy/kubernetes, issue 38): Kustomize-style plain manifests, rendered by ./kustomize.ts
 * (Helm and kustomize are Go binaries that cannot be installed here, and no faithful Go-template renderer exists on
 * npm), then validated two ways against the Kubernetes schemas as the `kubernetes-models` packages carry them (the
 * API's OpenAPI definitions; the Prometheus Operator's CRD for the ServiceMonitor): their compiled JSON-schema
 * validators (types, required fields, enums, formats), and their TypeScript types, whose excess-property check refuses
 * a field the API does not have (what `kubectl --validate=strict` refuses, and the validators let through). Then what
 * the issue asks of them: probes, the security context, the existing Secret, the HPA, the PDB, the optional parts.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import { Ingress } from 'kubernetes-models/networking.k8s.io/v1/Ingress';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Namespace } from 'kubernetes-models/v1/Namespace';
import { Service } from 'kubernetes-models/v1/Service';
import { ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor';
import { loadSettings, repoRoot, unknownVariables } from '../../src/config/settings.js';
import { render, type Manifest } from './kustomize.js';

const dir = path.join(repoRoot, 'deploy/kubernetes');
const example = render(path.join(dir, 'example'));
const base = render(path.join(dir, 'base'));
const scratch = mkdtempSync(path.join(repoRoot, 'server/test/deploy/.k8s-types-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Each kind: its model (the compiled validator) and the module and interface of its TypeScript type. */
const MODELS: Record<string, { model: new (data: never) => { validate(): void }; types: [string, string] }> = {
  Namespace: { model: Namespace, types: ['kubernetes-models/v1/Namespace', 'INamespace'] },
  ConfigMap: { model: ConfigMap, types: ['kubernetes-models/v1/ConfigMap', 'IConfigMap'] },
  Deployment: { model: Deployment, types: ['kubernetes-models/apps/v1/Deployment', 'IDeployment'] },
  Service: { model: Service, types: ['kubernetes-models/v1/Service', 'IService'] },
  HorizontalPodAutoscaler: {
    model: HorizontalPodAutoscaler,
    types: ['kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler', 'IHorizontalPodAutoscaler'],
  },
  PodDisruptionBudget: {
    model: PodDisruptionBudget,
    types: ['kubernetes-models/policy/v1/PodDisruptionBudget', 'IPodDisruptionBudget'],
  },
  Ingress: { model: Ingress, types: ['kubernetes-models/networking.k8s.io/v1/Ingress', 'IIngress'] },
  ServiceMonitor: {
    model: ServiceMonitor,
    types: ['@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor', 'IServiceMonitor'],
  },
};

const byKind = (manifests: Manifest[], kind: string) => manifests.find((m) => m.kind === kind)!;

/** The TypeScript compiler's errors for the manifests typed as their kinds' interfaces (excess properties included). */
function typeErrors(manifests: Manifest[]): string[] {
  const lines = manifests.map((m, i) => {
    const [module, name] = MODELS[m.kind]!.types;
    return `import type { ${name} as T${i} } from '${module}';\nexport const m${i}: T${i} = ${JSON.stringify(m)};`;
  });
  const file = path.join(scratch, 'manifests.ts');
  writeFileSync(file, `${lines.join('\n')}\n`);
  const options: ts.CompilerOptions = {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2023,
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: [],
  };
  const program = ts.createProgram([file], options);
  return ts
    .getPreEmitDiagnostics(program)
    .map(
      (d) => `${d.start === undefined ? '' : `at ${d.start}: `}${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`,
    );
}

describe('the Kubernetes manifests', () => {
  it('render, and validate against the Kubernetes schemas and types', () => {
    expect(example.map((m) => m.kind).sort()).toEqual(
      [
        'ConfigMap',
        'Deployment',
        'HorizontalPodAutoscaler',
        'Ingress',
        'Namespace',
        'PodDisruptionBudget',
        'Service',
        'ServiceMonitor',
      ].sort(),
    );
    for (const m of example) {
      const entry = MODELS[m.kind];
      expect(entry, m.kind).toBeDefined();
      expect(() => new entry!.model(m as never).validate(), `${m.kind} ${m.metadata.name}`).not.toThrow();
    }
    expect(typeErrors(example)).toEqual([]);
    // Both checks can fail: a wrong type, and a field Kubernetes does not have.
    const broken = structuredClone(byKind(example, 'Deployment')) as Manifest & {
      spec: { replicas: unknown; template: { spec: Record<string, unknown> } };
    };
    broken.spec.replicas = 'two';
    expect(() => new Deployment(broken as never).validate()).toThrow();
    const typo = structuredClone(byKind(example, 'Deployment')) as typeof broken;
    typo.spec.template.spec.securityContex = {};
    expect(() => new Deployment(typo as never).validate()).not.toThrow();
    expect(typeErrors([typo]).join('\n')).toMatch(/securityContex/);
  });

  it('places everything in the namespace and the image from the overlay', () => {
    for (const m of example) if (m.kind !== 'Namespace') expect(m.metadata.namespace, m.kind).toBe('secret-push');
    const container = (
      byKind(example, 'Deployment').spec as { template: { spec: { containers: { image: string }[] } } }
    ).template.spec.containers[0]!;
    expect(container.image).toBe('registry.example.org/secret-push:0.1.0');
    // The base labels its own resources (the overlay's Namespace is not one of them).
    for (const m of base) expect(m.metadata.labels?.['app.kubernetes.io/name'], m.kind).toBe('secret-push');
  });

  it('runs non-root on a read-only root file system, probes readiness and liveness, and reads its secrets as files', () => {
    type Pod = {
      securityContext: Record<string, unknown>;
      containers: {
        securityContext: Record<string, unknown>;
        readinessProbe: { httpGet: { path: string } };
        livenessProbe: { httpGet: { path: string } };
        env: { name: string; value: string }[];
        envFrom: { configMapRef: { name: string } }[];
        volumeMounts: { name: string; mountPath: string }[];
      }[];
      volumes: { name: string; secret?: { secretName: string; items: { key: string }[] } }[];
      terminationGracePeriodSeconds: number;
    };
    const pod = (byKind(base, 'Deployment').spec as { template: { spec: Pod } }).template.spec;
    expect(pod.securityContext).toMatchObject({
      runAsNonRoot: true,
      runAsUser: 10001,
      runAsGroup: 10001,
      fsGroup: 10001,
    });
    const [c] = pod.containers;
    expect(c!.securityContext).toMatchObject({
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
    });
    expect([c!.readinessProbe.httpGet.path, c!.livenessProbe.httpGet.path]).toEqual(['/readyz', '/healthz']);
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThan(10);
    expect(c!.volumeMounts.map((v) => v.mountPath).sort()).toEqual(['/data', '/run/secrets/secret-push', '/tmp']);
    // The existing Secret's keys are the *_FILE settings' files; the rest comes from the ConfigMap.
    const secret = pod.volumes.find((v) => v.secret)!.secret!;
    expect(secret.secretName).toBe('secret-push');
    const files = Object.fromEntries(c!.env.map((e) => [e.name, e.value]));
    expect(Object.keys(files).sort()).toEqual([
      'DATABASE_URL_FILE',
      'PWPUSH_MASTER_KEY_FILE',
      'PWPUSH_METRICS_TOKEN_FILE',
    ]);
    for (const value of Object.values(files))
      expect(secret.items.map((i) => `/run/secrets/secret-push/${i.key}`)).toContain(value);
    const config = byKind(base, 'ConfigMap').data as Record<string, string>;
    expect(c!.envFrom[0]!.configMapRef.name).toBe(byKind(base, 'ConfigMap').metadata.name);
    const env = { ...config, ...files };
    expect(unknownVariables(env)).toEqual([]);
    // The settings load in production, given the Secret's files.
    const secrets = mkdtempSync(path.join(os.tmpdir(), 'sp-k8s-'));
    try {
      writeFileSync(path.join(secrets, 'master_key'), `${'ab'.repeat(32)}\n`);
      writeFileSync(path.join(secrets, 'database_url'), 'postgres://app:pw@postgres.example:5432/secret_push\n');
      writeFileSync(path.join(secrets, 'metrics_token'), 'a-scrape-token-of-some-length\n');
      const local = Object.fromEntries(
        Object.entries(files).map(([k, v]) => [k, v.replace('/run/secrets/secret-push', secrets)]),
      );
      const settings = loadSettings({ ...config, ...local, PWPUSH_ENV: 'production' });
      expect([settings.workers, settings.metricsEnabled, settings.metricsToken, settings.trustProxy]).toEqual([
        1,
        true,
        'a-scrape-token-of-some-length',
        true,
      ]);
    } finally {
      rmSync(secrets, { recursive: true, force: true });
    }
  });

  it('scales the Deployment with an HPA, keeps one pod through disruptions, and scrapes /metrics with the token', () => {
    const hpa = byKind(base, 'HorizontalPodAutoscaler').spec as {
      scaleTargetRef: { kind: string; name: string };
      minReplicas: number;
    };
    expect(hpa.scaleTargetRef).toMatchObject({ kind: 'Deployment', name: 'secret-push' });
    expect(hpa.minReplicas).toBeGreaterThanOrEqual(2);
    expect((byKind(base, 'PodDisruptionBudget').spec as { minAvailable: number }).minAvailable).toBe(1);
    const monitor = byKind(example, 'ServiceMonitor').spec as {
      endpoints: { path: string; port: string; bearerTokenSecret: { key: string } }[];
    };
    expect(monitor.endpoints[0]).toMatchObject({
      path: '/metrics',
      port: 'http',
      bearerTokenSecret: { key: 'metrics_token' },
    });
    const ingress = byKind(example, 'Ingress').spec as {
      rules: { http: { paths: { backend: { service: { name: string } } }[] } }[];
    };
    expect(ingress.rules[0]!.http.paths[0]!.backend.service.name).toBe(byKind(base, 'Service').metadata.name);
    // Neither optional part is in the base.
    expect(base.some((m) => m.kind === 'Ingress' || m.kind === 'ServiceMonitor')).toBe(false);
  });
});
