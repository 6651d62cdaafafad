/**
 * What a build changes, in words a person reads: resources and endpoints added or removed since the
 * previous build (from its manifest), and the migration written.
 */
import type { ServiceModel } from '../model/model';

/** `METHOD /path` of every endpoint the service serves, sorted; item paths show the key as `{pk}`. */
export function endpointsOf(model: ServiceModel): string[] {
  const base = model.basePath.replace(/\/+$/, '');
  const out: string[] = [];
  const add = (method: string, p: string) => out.push(`${method.toUpperCase()} ${base}${p.replace(/:(\w+)/g, '{$1}')}`);
  for (const e of model.endpoints) add(e.method.replace(/^api_/, ''), e.path);
  for (const r of model.resources) {
    for (const o of r.operations) add(o.method, o.pathKind === 'collection' ? `/${r.base}/` : `/${r.base}/{pk}/`);
    if (r.softDelete) add('post', `/${r.base}/{pk}/restore/`);
    if (r.softDelete?.hardDelete) add('delete', `/${r.base}/{pk}/hard/`);
    for (const b of r.bulk) add(b.method, `/${r.base}/bulk/`);
    for (const a of r.actions)
      for (const { method: m } of a.routes) add(m, a.detail ? `/${r.base}/{pk}/${a.name}/` : `/${r.base}/${a.name}/`);
    for (const rel of r.relations) {
      if (rel.get) add('get', `/${r.base}/{pk}/${rel.path}/`);
      if (rel.add || rel.remove) add('post', `/${r.base}/{pk}/${rel.path}/`);
    }
    for (const e of r.endpoints) add(e.method, e.path);
  }
  return [...new Set(out)].sort();
}

export interface BuildChanges {
  resourcesAdded: string[];
  resourcesRemoved: string[];
  endpointsAdded: string[];
  endpointsRemoved: string[];
}

/** Resource folders (`resources/<name>/`) named in a manifest's file list. */
function resourceFolders(files: readonly string[]): Set<string> {
  return new Set(files.map((f) => /^resources\/([^/]+)\//.exec(f)?.[1]).filter((x): x is string => x !== undefined));
}

/** Differences from the previous manifest; empty lists when there was none (a first build). */
export function changesSince(
  previous: { files: string[]; endpoints?: string[] } | undefined,
  files: readonly string[],
  endpoints: readonly string[],
): BuildChanges {
  if (!previous) return { resourcesAdded: [], resourcesRemoved: [], endpointsAdded: [], endpointsRemoved: [] };
  const before = resourceFolders(previous.files);
  const after = resourceFolders(files);
  const oldEndpoints = new Set(previous.endpoints ?? endpoints);
  const newEndpoints = new Set(endpoints);
  return {
    resourcesAdded: [...after].filter((r) => !before.has(r)).sort(),
    resourcesRemoved: [...before].filter((r) => !after.has(r)).sort(),
    endpointsAdded: [...newEndpoints].filter((e) => !oldEndpoints.has(e)),
    endpointsRemoved: [...oldEndpoints].filter((e) => !newEndpoints.has(e)),
  };
}
