/**
 * Semantic checks on the model's names and hook references: what only the derived values can show.
 * Two resources whose routes, tables or operation ids clash, a hook named in a file without a hooks
 * module, a hooks module that is missing. Each problem is reported at the spec position the clashing
 * value comes from (see resource-names.ts and spec/hook-refs.ts, which the model builder uses too).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Diagnostic } from '../load/diagnostics';
import {
  BUILTINS_BY_ROLE,
  resourceHookRefs,
  serviceHookRefs,
  sharedHookNames,
  type HookedResource,
  type HookedSpecs,
  type HookRef,
} from '../validate/hook-refs';
import { diagnosticAt, type LoadedSpecs, type SpecFile } from '../load/load';
import type { ResourceSpec, ServiceSpec } from '../validate/meta-schema';
import type { SourceRef } from './model';
import { pluralOf } from './names';
import {
  endpointMethod,
  endpointOperationId,
  relationOperationIds,
  relationPath,
  resourceNames,
  type Named,
  type ResourceNames,
} from './resource-names';
import { didYouMean } from '../validate/suggest';

export interface DescribedResource extends HookedResource {
  names: ResourceNames;
}

/** The specs that passed the meta-schema, with their derived names and hook references. */
export interface DescribedSpecs extends HookedSpecs {
  resources: DescribedResource[];
}

/**
 * Names and hook references of every file the meta-schema accepted (`documents`: file → its data).
 * Files that failed it are left out: their problems are already reported.
 */
export function describeSpecs(loaded: LoadedSpecs, documents: ReadonlyMap<SpecFile, unknown>): DescribedSpecs {
  const serviceData = loaded.service && (documents.get(loaded.service) as ServiceSpec | undefined);
  const shared = sharedHookNames(serviceData);
  const resources: DescribedResource[] = [];
  for (const spec of loaded.resources) {
    const data = documents.get(spec) as ResourceSpec | undefined;
    if (data) resources.push({ spec, data, names: resourceNames(spec.file, data), hooks: resourceHookRefs(spec.file, data, shared) });
  }
  const service =
    loaded.service && serviceData
      ? { spec: loaded.service, data: serviceData, hooks: serviceHookRefs(loaded.service.file, serviceData) }
      : undefined;
  return { dir: loaded.dir, service, resources };
}

/** Every problem of names and hook references. */
export function checkModel(described: DescribedSpecs): Diagnostic[] {
  return [...checkNames(described), ...checkHookModules(described)];
}

function specsByFile(described: DescribedSpecs): Map<string, SpecFile> {
  const files = new Map(described.resources.map((r) => [r.spec.file, r.spec]));
  if (described.service) files.set(described.service.spec.file, described.service.spec);
  return files;
}

// ---------------------------------------------------------------------------------------------
// Names shared between files: models, tables, route bases, operation ids
// ---------------------------------------------------------------------------------------------

/** Claims names of one kind; the second claim of a name is reported at its own position. */
class NameRegistry {
  private readonly taken = new Map<string, { owner: string; file: string }>();

  constructor(
    private readonly what: string,
    private readonly report: (source: SourceRef, message: string) => void,
  ) {}

  /** False (after reporting) when the name is already taken. */
  claim(name: string, source: SourceRef, owner: string, shown = name): boolean {
    const first = this.taken.get(name);
    if (first) {
      this.report(source, `duplicate ${this.what} "${shown}": already used by ${first.owner} in ${first.file}`);
      return false;
    }
    this.taken.set(name, { owner, file: source.file });
    return true;
  }
}

function checkNames(described: DescribedSpecs): Diagnostic[] {
  const out: Diagnostic[] = [];
  const files = specsByFile(described);
  const report = (source: SourceRef, message: string) => out.push(diagnosticAt(files.get(source.file)!, source.path, message));
  const models = new Map<string, DescribedResource>();
  const tables = new NameRegistry('table', report);
  const routes = new NameRegistry('route base', report);
  const operationIds = new NameRegistry('operation id', report);
  // Index names are one namespace per database (PostgreSQL schema, SQLite file), across tables.
  const indexes = new NameRegistry('index name', report);
  const unique: DescribedResource[] = [];
  for (const res of described.resources) {
    const { model } = res.names;
    const first = models.get(model.name);
    if (first) {
      report(model.source, `duplicate model "${model.name}": already defined in ${first.spec.file}`);
      continue;
    }
    models.set(model.name, res);
    unique.push(res);
  }
  for (const { names } of unique) {
    const owner = names.model.name;
    tables.claim(names.table.name, names.table.source, owner);
    checkIndexNames(names, indexes, report);
    // A resource whose base clashes would clash on every operation id too: one message says it.
    if (!routes.claim(names.base.name, names.base.source, owner, `/${names.base.name}`)) continue;
    for (const id of resourceOperationIds(names, models)) operationIds.claim(id.name, id.source, owner);
  }
  const service = described.service;
  for (const [i, endpoint] of (service?.data.endpoints ?? []).entries()) {
    const id = endpointOperationId(endpoint.handler, { file: service!.spec.file, path: ['endpoints', i, 'handler'] });
    operationIds.claim(id.name, id.source, 'the service');
  }
  checkStaticRoutes(described, unique, report);
  return out;
}

/** A resource's index names: claimed across the specs, at most 63 characters; and no two indexes on the same columns. */
function checkIndexNames(names: ResourceNames, registry: NameRegistry, report: (source: SourceRef, message: string) => void): void {
  const seen: string[] = [];
  for (const index of names.indexes) {
    const key = `${index.unique}:${index.columns.join(',')}`;
    const first = seen.indexOf(key);
    seen.push(key);
    if (index.name.length > 63) {
      // PostgreSQL would cut the name silently, and a later migration would not find the index by it.
      report(
        index.entry,
        `the index name "${index.name}" is longer than 63 characters, the most PostgreSQL keeps: give the index a shorter name (name: ...)`,
      );
    } else if (first >= 0) {
      report(index.entry, `duplicate index: indexes[${first}] has the same columns (${index.columns.join(', ')}); remove one`);
    } else {
      registry.claim(index.name, index.source, names.model.name);
    }
  }
}

/**
 * Routes written in full that two declarations would both serve: a bulk route `/{base}/bulk/`, a
 * list-level action's `/{base}/{name}/` and a custom endpoint's path, with the same method. Claimed in the order the
 * routes are registered (the service's endpoints first), so the later one is reported.
 */
function checkStaticRoutes(
  described: DescribedSpecs,
  resources: DescribedResource[],
  report: (source: SourceRef, message: string) => void,
): void {
  const routes = new NameRegistry('route', report);
  const claimEndpoints = (file: string, list: readonly { method: string; path: string }[], at: (string | number)[], owner: string) =>
    list.forEach((e, i) => routes.claim(`${endpointMethod(e.method).toUpperCase()} ${e.path}`, { file, path: [...at, i, 'path'] }, owner));
  const service = described.service;
  if (service) claimEndpoints(service.spec.file, service.data.endpoints ?? [], ['endpoints'], 'the service');
  for (const { spec, data, names } of resources) {
    const owner = names.model.name;
    for (const bulk of names.bulk) routes.claim(`${bulk.method.toUpperCase()} /${names.base.name}/bulk/`, bulk.operationId.source, owner);
    for (const action of names.actions) {
      if (action.detail) continue;
      for (const route of action.routes)
        routes.claim(`${route.method.toUpperCase()} /${names.base.name}/${action.name}/`, route.operationId.source, owner);
    }
    claimEndpoints(spec.file, data.viewset?.endpoints ?? [], ['viewset', 'endpoints'], owner);
  }
}

/** Every operation id of a resource, in the order its routes are registered. */
function resourceOperationIds(names: ResourceNames, models: ReadonlyMap<string, DescribedResource>): Named[] {
  const ids: Named[] = names.operations.map((op) => op.operationId);
  const actionIds = names.actions.flatMap((a) => a.routes.map((route) => route.operationId));
  if (names.softDelete) {
    // An action that takes a soft delete route's operation id is reported by validate, at the action.
    const own = [names.softDelete.restore, ...(names.softDelete.hardDelete ? [names.softDelete.hardDelete] : [])];
    ids.push(...own.filter((id) => !actionIds.some((a) => a.name === id.name)));
  }
  ids.push(...actionIds);
  ids.push(...names.bulk.map((b) => b.operationId));
  const owner = models.get(names.model.name)!;
  const relatedNames = new Set<string>();
  (owner.data.viewset?.m2m_relations ?? []).forEach((rel, i) => {
    const target = models.get(rel.model);
    // A repeated related_name is reported where it is written; its routes would only repeat that.
    if (!target || relatedNames.has(rel.related_name)) return;
    relatedNames.add(rel.related_name);
    const source: SourceRef = { file: names.model.source.file, path: ['viewset', 'm2m_relations', i] };
    const { get, manage } = relationOperationIds(names, relationPath(rel.path, target.names));
    if (rel.get !== false) ids.push({ name: get, source });
    if (rel.add !== false || rel.remove !== false) ids.push({ name: manage, source });
  });
  ids.push(...names.endpoints);
  return ids;
}

// ---------------------------------------------------------------------------------------------
// Hooks modules
// ---------------------------------------------------------------------------------------------

function checkHookModules(described: DescribedSpecs): Diagnostic[] {
  const out: Diagnostic[] = [];
  const check = (spec: SpecFile, module: string | undefined, refs: HookRef[]) => {
    if (module !== undefined) {
      const problem = moduleProblem(described.dir, module);
      if (problem) out.push(diagnosticAt(spec, ['hooks'], problem));
      return;
    }
    for (const ref of refs) {
      if (ref.module === 'own') out.push(diagnosticAt(spec, ref.source.path, withoutModule(ref), ref.key));
    }
  };
  if (described.service) check(described.service.spec, described.service.data.hooks, described.service.hooks);
  for (const res of described.resources) check(res.spec, res.data.hooks, res.hooks);
  return out;
}

/**
 * The hook references whose exports can be checked while other problems are reported: those of a
 * file whose hooks module is usable (for a name the service file shares, the service file's module),
 * and at whose position no other problem is reported (a name already said to be wrong is not
 * checked again). Every other file and name is left out, so the export check never reads a module
 * that is missing or outside the specs folder.
 */
export function hookExportsCheckable(described: DescribedSpecs, reported: readonly Diagnostic[]): DescribedSpecs {
  const usable = (module: string | undefined) => module !== undefined && moduleProblem(described.dir, module) === undefined;
  const serviceUsable = described.service !== undefined && usable(described.service.data.hooks);
  const taken = new Set(reported.map((d) => `${d.file}\0${d.line}\0${d.column}`));
  const keep = (spec: SpecFile, module: string | undefined, refs: readonly HookRef[]) =>
    refs.filter((ref) => {
      if (!(ref.module === 'service' ? serviceUsable : usable(module))) return false;
      const at = diagnosticAt(spec, ref.source.path, '', ref.key);
      return !taken.has(`${at.file}\0${at.line}\0${at.column}`);
    });
  const service = described.service && {
    ...described.service,
    hooks: keep(described.service.spec, described.service.data.hooks, described.service.hooks),
  };
  const resources = described.resources.map((res) => ({ ...res, hooks: keep(res.spec, res.data.hooks, res.hooks) }));
  return { dir: described.dir, service, resources };
}

/**
 * A hook named in a file without a hooks module. A name in place of a built-in (an authenticator, a
 * paginator, an exception class) is most often a misspelt or imagined built-in: say which exist.
 */
function withoutModule(ref: HookRef): string {
  const builtins = BUILTINS_BY_ROLE[ref.role];
  if (!builtins) return `"${ref.name}" names a hook but this file has no hooks module`;
  const hint = didYouMean(ref.name, builtins.names) || ` (built-in ${pluralOf(builtins.what)}: ${builtins.names.join(', ')})`;
  return `"${ref.name}" is not a built-in ${builtins.what}${hint}; a custom one is an export of the file's hooks module, and this file has none`;
}

/** Why a hooks module cannot be used, if it cannot. */
function moduleProblem(dir: string, module: string): string | undefined {
  const file = path.resolve(dir, module);
  if (path.relative(dir, file).startsWith('..')) return `hooks module "${module}" must be inside the specs directory`;
  if (!fs.existsSync(file) || !fs.statSync(file).isFile()) return `hooks module "${module}" not found`;
  return undefined;
}
