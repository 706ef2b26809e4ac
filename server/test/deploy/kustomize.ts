/**
 * A small renderer of the Kustomize features deploy/kubernetes uses (kustomize itself, like Helm, is a Go binary that
 * cannot be installed here; `kubectl apply -k` runs the real one): `resources` (files, or folders with their own
 * kustomization.yaml), `components`, `namespace`, `labels` (pairs, on metadata only: Kustomize's default) and `images`.
 * Any other field of a kustomization is refused, so the manifests cannot use a feature this renders differently.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';

export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [field: string]: unknown;
}

interface Kustomization {
  apiVersion: string;
  kind: 'Kustomization' | 'Component';
  namespace?: string;
  resources?: string[];
  components?: string[];
  labels?: { pairs: Record<string, string>; includeSelectors?: false; includeTemplates?: false }[];
  images?: { name: string; newName?: string; newTag?: string }[];
}

const FIELDS = new Set(['apiVersion', 'kind', 'namespace', 'resources', 'components', 'labels', 'images']);
/** Kinds that live in no namespace (of those the manifests use). */
const CLUSTER_KINDS = new Set(['Namespace']);

function readYaml(file: string): unknown[] {
  return parseAllDocuments(readFileSync(file, 'utf8')).map((doc) => {
    if (doc.errors.length > 0) throw new Error(`${file}: ${doc.errors[0]!.message}`);
    return doc.toJS() as unknown;
  });
}

function kustomization(dir: string, kind: Kustomization['kind']): Kustomization {
  const file = path.join(dir, 'kustomization.yaml');
  const [k] = readYaml(file) as Kustomization[];
  if (!k || k.kind !== kind) throw new Error(`${file}: expected kind ${kind}`);
  for (const field of Object.keys(k)) if (!FIELDS.has(field)) throw new Error(`${file}: ${field} is not rendered here`);
  for (const label of k.labels ?? []) {
    if (label.includeSelectors || label.includeTemplates)
      throw new Error(`${file}: labels on selectors are not rendered here`);
  }
  return k;
}

/** The images of a pod template's containers (Deployments only: the kinds the manifests use). */
function containersOf(m: Manifest): { image?: string }[] {
  const spec =
    (m.spec as {
      template?: { spec?: { containers?: { image?: string }[]; initContainers?: { image?: string }[] } };
    }) ?? {};
  return [...(spec.template?.spec?.containers ?? []), ...(spec.template?.spec?.initContainers ?? [])];
}

/** Renders a folder with a kustomization.yaml: the manifests `kubectl kustomize` would print, in the same order. */
export function render(dir: string, kind: Kustomization['kind'] = 'Kustomization'): Manifest[] {
  const k = kustomization(dir, kind);
  let out: Manifest[] = [];
  for (const entry of k.resources ?? []) {
    const target = path.resolve(dir, entry);
    if (!existsSync(target)) throw new Error(`${dir}: resource ${entry} does not exist`);
    out.push(...(statSync(target).isDirectory() ? render(target) : (readYaml(target) as Manifest[])));
  }
  for (const entry of k.components ?? []) out.push(...render(path.resolve(dir, entry), 'Component'));
  out = out.map((m) => structuredClone(m));
  for (const m of out) {
    for (const label of k.labels ?? []) m.metadata.labels = { ...m.metadata.labels, ...label.pairs };
    if (k.namespace && !CLUSTER_KINDS.has(m.kind)) m.metadata.namespace = k.namespace;
    for (const image of k.images ?? []) {
      for (const c of containersOf(m)) {
        const [name, tag] = (c.image ?? '').split(/:(?=[^/]*$)/);
        if (name !== image.name) continue;
        c.image = `${image.newName ?? name}:${image.newTag ?? tag}`;
      }
    }
  }
  return out;
}
