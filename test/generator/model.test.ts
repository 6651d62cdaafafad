/**
 * Unit tests of `buildModel`: the intermediate model derived from small inline specs. Every spec is
 * loaded and validated first, so a failure here is a modelling problem, not a spec mistake.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { buildModel } from '../../generator/model/build-model';
import { resolveAuth } from '../../generator/model/build-viewset';
import { formatDiagnostic } from '../../generator/load/diagnostics';
import { loadSpecs } from '../../generator/load/load';
import type { Resource, SchemaField, SchemaModel, ServiceModel } from '../../generator/model/model';
import { checkSpecs } from '../../generator/pipeline';
import { firstBuildResults, renderService } from '../../generator/render/render';
import { softDeleteFieldName } from '../../generator/validate/viewset-defaults';

const SERVICE = 'title: Test API\nversion: 1.0.0\n';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

/** Writes `files` (path → text, plus a default service.yaml) to a fresh directory, checks it is valid, and builds the model. */
function modelOf(files: Record<string, string>): ServiceModel {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svcgen-model-'));
  dirs.push(dir);
  for (const [name, text] of Object.entries({ 'service.yaml': SERVICE, ...files })) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), text);
  }
  const { diagnostics, described } = checkSpecs(loadSpecs(dir, dir));
  expect(diagnostics.map(formatDiagnostic)).toEqual([]);
  return buildModel(described);
}

/** A resource file `resources/<name>.yaml` from lines. */
const resource = (name: string, ...lines: string[]) => ({ [`resources/${name}.yaml`]: lines.join('\n') + '\n' });

function res(model: ServiceModel, name: string): Resource {
  const r = model.resources.find((x) => x.model === name);
  if (!r) throw new Error(`no resource ${name} in ${model.resources.map((x) => x.model).join(', ')}`);
  return r;
}

const names = (s: SchemaModel) => s.fields.map((f) => f.name);
const fieldOf = (s: SchemaModel, name: string): SchemaField => {
  const f = s.fields.find((x) => x.name === name);
  if (!f) throw new Error(`no field ${name} in ${s.name}: ${names(s).join(', ')}`);
  return f;
};
const required = (s: SchemaModel) => Object.fromEntries(s.fields.map((f) => [f.name, f.required]));

const user = resource(
  'users',
  'model: User',
  'fields:',
  '  username: {type: string, max_length: 150}',
  '  password: {type: password}',
  '  bio: {type: text, blank: true, default: ""}',
  '  joined: {type: datetime, auto_now_add: true}',
);

describe('buildModel: primary keys', () => {
  it('adds an implicit auto-increment integer "id" first when no field is the primary key', () => {
    const r = res(modelOf(user), 'User');
    expect(r.pk).toMatchObject({
      name: 'id',
      column: 'id',
      type: 'integer',
      primaryKey: true,
      autoIncrement: true,
      unique: true,
      nullable: false,
    });
    expect(r.fields[0]).toBe(r.pk);
    expect(r.fields.map((f) => f.name)).toEqual(['id', 'username', 'password', 'bio', 'joined']);
    expect(r.fields.filter((f) => f.primaryKey)).toHaveLength(1);
    // The database generates it: never in the create body, always in the output.
    expect(names(r.schemas.in)).not.toContain('id');
    expect(names(r.schemas.update)).not.toContain('id');
    expect(names(r.schemas.out)[0]).toBe('id');
    expect(fieldOf(r.schemas.out, 'id')).toMatchObject({ kind: 'value', value: 'int', bounds: { min: -2147483648, max: 2147483647 } });
  });

  it('uses a uuid primary key as it is, moved first, and not required on create', () => {
    const r = res(
      modelOf(resource('labels', 'model: Label', 'fields:', '  text: {type: string}', '  id: {type: uuid, primary_key: true}')),
      'Label',
    );
    expect(r.pk).toMatchObject({ name: 'id', column: 'id', type: 'uuid', primaryKey: true, autoIncrement: false, unique: true });
    expect(r.fields.map((f) => f.name)).toEqual(['id', 'text']);
    expect(fieldOf(r.schemas.in, 'id')).toMatchObject({ value: 'uuid', required: false });
    expect(fieldOf(r.schemas.out, 'id').value).toBe('uuid');
  });

  it('uses a string primary key, which the client must send on create', () => {
    const r = res(
      modelOf(
        resource(
          'makers',
          'model: Maker',
          'fields:',
          '  title: {type: string}',
          '  code: {type: string, max_length: 20, primary_key: true}',
        ),
      ),
      'Maker',
    );
    expect(r.pk).toMatchObject({ name: 'code', column: 'code', type: 'string', primaryKey: true, autoIncrement: false, maxLength: 20 });
    expect(r.fields.map((f) => f.name)).toEqual(['code', 'title']);
    expect(fieldOf(r.schemas.in, 'code')).toMatchObject({ value: 'str', required: true, maxLength: 20 });
    // A key is not editable after creation.
    expect(names(r.schemas.update)).not.toContain('code');
  });

  it('treats an explicit integer primary key as auto-increment unless it has a default', () => {
    const m = modelOf({
      ...resource('a', 'model: A', 'fields:', '  num: {type: big_integer, primary_key: true}'),
      ...resource('b', 'model: B', 'fields:', '  num: {type: integer, primary_key: true, default: 1}'),
    });
    expect(res(m, 'A').pk).toMatchObject({ name: 'num', type: 'big_integer', autoIncrement: true });
    expect(res(m, 'B').pk).toMatchObject({ name: 'num', type: 'integer', autoIncrement: false });
  });
});

describe('buildModel: relations', () => {
  const model = () =>
    modelOf({
      ...user,
      ...resource('labels', 'model: Label', 'fields:', '  id: {type: uuid, primary_key: true}'),
      ...resource('makers', 'model: Maker', 'fields:', '  code: {type: string, max_length: 20, primary_key: true}'),
      ...resource('serials', 'model: Serial', 'fields:', '  num: {type: big_integer, primary_key: true}'),
      ...resource(
        'posts',
        'model: BlogPost',
        'fields:',
        '  title: {type: string}',
        '  author: {type: foreign_key, to: User}',
        '  label: {type: foreign_key, to: Label, null: true, on_delete: set_null}',
        '  maker: {type: foreign_key, to: Maker, on_delete: protect}',
        '  serial: {type: foreign_key, to: Serial, null: true}',
        '  tags: {type: many_to_many, to: Label}',
        '  readers: {type: many_to_many, to: User}',
        '  related: {type: many_to_many, to: BlogPost}',
      ),
    });

  it('names foreign key columns <field>_id and indexes them', () => {
    const r = res(model(), 'BlogPost');
    const fks = r.fields.filter((f) => f.type === 'foreign_key');
    expect(fks.map((f) => [f.name, f.column, f.index])).toEqual([
      ['author', 'author_id', true],
      ['label', 'label_id', true],
      ['maker', 'maker_id', true],
      ['serial', 'serial_id', true],
    ]);
    // Many-to-many fields are not columns.
    expect(r.fields.map((f) => f.name)).toEqual(['id', 'title', 'author', 'label', 'maker', 'serial']);
  });

  it("resolves each foreign key to its target's table and primary key, with the delete rule", () => {
    const m = model();
    const r = res(m, 'BlogPost');
    const rel = (name: string) => r.fields.find((f) => f.name === name)!.relation!;
    expect(rel('author')).toMatchObject({ target: 'User', targetTable: 'users', onDelete: 'cascade' });
    expect(rel('author').targetPk).toBe(res(m, 'User').pk);
    expect(rel('label')).toMatchObject({ target: 'Label', targetTable: 'labels', onDelete: 'set_null' });
    expect(rel('label').targetPk).toBe(res(m, 'Label').pk);
    expect(rel('maker')).toMatchObject({ target: 'Maker', targetTable: 'makers', onDelete: 'protect' });
    expect(rel('maker').targetPk.name).toBe('code');
  });

  it("gives foreign keys the value kind of the target's primary key", () => {
    const r = res(model(), 'BlogPost');
    const kinds = (s: SchemaModel) =>
      Object.fromEntries(
        s.fields.filter((f) => f.kind === 'foreign_key' || f.kind === 'many_to_many').map((f) => [f.name, [f.kind, f.value]]),
      );
    const expected = {
      author: ['foreign_key', 'int'],
      label: ['foreign_key', 'uuid'],
      maker: ['foreign_key', 'str'],
      serial: ['foreign_key', 'bigint'],
      tags: ['many_to_many', 'uuid'],
      readers: ['many_to_many', 'int'],
      related: ['many_to_many', 'int'],
    };
    expect(kinds(r.schemas.out)).toEqual(expected);
    expect(kinds(r.schemas.in)).toEqual(expected);
    expect(fieldOf(r.schemas.out, 'author').bounds).toEqual({ min: -2147483648, max: 2147483647 });
    expect(fieldOf(r.schemas.out, 'serial').bounds).toEqual({ min: Number.MIN_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER });
    expect(fieldOf(r.schemas.out, 'label').bounds).toBeUndefined();
    // Required on create unless nullable; many-to-many lists are optional.
    expect(required(r.schemas.in)).toMatchObject({ author: true, label: false, maker: true, serial: false, tags: false });
  });

  it('names many-to-many join tables <table>_<field> with <model>_id columns, from_/to_ for a self relation', () => {
    const r = res(model(), 'BlogPost');
    expect(r.m2m.map((x) => [x.name, x.target, x.targetTable, x.joinTable, x.ownColumn, x.otherColumn])).toEqual([
      ['tags', 'Label', 'labels', 'blog_posts_tags', 'blog_post_id', 'label_id'],
      ['readers', 'User', 'users', 'blog_posts_readers', 'blog_post_id', 'user_id'],
      ['related', 'BlogPost', 'blog_posts', 'blog_posts_related', 'from_blog_post_id', 'to_blog_post_id'],
    ]);
    expect(r.m2m[0].targetPk.type).toBe('uuid');
  });
});

describe('buildModel: nested writes', () => {
  const model = () =>
    modelOf({
      ...resource(
        'orders',
        'model: Order',
        'fields:',
        '  customer: {type: string, max_length: 40}',
        'serializer:',
        '  CreateSerializer:',
        '    fields: [customer, lines: {write: create}]',
        '  UpdateSerializer:',
        '    fields: [customer, lines: {write: merge}]',
      ),
      ...resource(
        'lines',
        'model: Line',
        'fields:',
        '  order: {type: foreign_key, to: Order, on_delete: cascade, reverse_name: lines}',
        '  product: {type: string, max_length: 20}',
        '  quantity: {type: integer, default: 1}',
      ),
    });

  it('adds each list to the input schema, its items taking the child create fields but the foreign key', () => {
    const order = res(model(), 'Order');
    expect(names(order.schemas.in)).toEqual(['customer', 'lines']);
    const lines = fieldOf(order.schemas.in, 'lines');
    expect([lines.kind, lines.required, lines.write?.mode, lines.write?.child.model]).toEqual(['nested_write', false, 'create', 'Line']);
    expect(lines.write!.item.name).toBe('OrderLinesItem');
    // No max_items: the default cap of a nested write's list.
    expect(lines.write!.maxItems).toBe(100);
    expect(required(lines.write!.item)).toEqual({ product: true, quantity: false });
    const update = fieldOf(order.schemas.update, 'lines').write!;
    expect([update.mode, update.item.name]).toEqual(['merge', 'OrderLinesUpdateItem']);
    expect(required(update.item)).toEqual({ id: false, product: true, quantity: false });
  });

  it('answers create and update with the response schema and the written children', () => {
    const order = res(model(), 'Order');
    expect(order.nestedWrites.create.map((w) => w.name)).toEqual(['lines']);
    expect(order.nestedResults.create?.name).toBe('OrderCreateResult');
    expect(names(order.nestedResults.create!)).toEqual(['id', 'customer', 'lines']);
    expect(required(order.nestedResults.update!)).toEqual({ id: true, customer: true, lines: false });
    // The list items of the response schemas stay the record's own.
    expect(names(order.responses.create)).toEqual(['id', 'customer']);
  });
});

describe('buildModel: reverse relations', () => {
  const model = () =>
    modelOf({
      ...resource('makers', 'model: Maker', 'fields:', '  code: {type: string, max_length: 20, primary_key: true}'),
      ...resource('labels', 'model: Label', 'fields:', '  text: {type: string}'),
      ...resource(
        'widgets',
        'model: Widget',
        'fields:',
        '  maker: {type: foreign_key, to: Maker, null: true, on_delete: protect, reverse_name: widgets}',
        '  designer: {type: foreign_key, to: Maker, null: true}',
        '  labels: {type: many_to_many, to: Label, reverse_name: widgets}',
        '  parent: {type: foreign_key, to: Widget, null: true, reverse_name: children}',
      ),
      ...resource('gadgets', 'model: Gadget', 'fields:', '  maker: {type: foreign_key, to: Maker, reverse_name: gadgets}'),
    });

  it('gives the target one reverse relation per reverse_name, in order of resources then fields', () => {
    const m = model();
    const maker = res(m, 'Maker');
    expect(maker.reverse.map((r) => [r.name, r.from, r.fromTable, r.kind])).toEqual([
      ['gadgets', 'Gadget', 'gadgets', 'foreign_key'],
      ['widgets', 'Widget', 'widgets', 'foreign_key'],
    ]);
    // The foreign key is the very field of the model holding it.
    expect(maker.reverse[1].field).toBe(res(m, 'Widget').fields.find((f) => f.name === 'maker'));
    expect(maker.reverse[1].m2m).toBeUndefined();
    expect(maker.reverse[1].source).toEqual({ file: expect.stringMatching(/widgets\.yaml$/), path: ['fields', 'maker', 'reverse_name'] });
  });

  it('names many-to-many and self relations, and nothing without reverse_name', () => {
    const m = model();
    const label = res(m, 'Label');
    expect(label.reverse.map((r) => [r.name, r.from, r.kind])).toEqual([['widgets', 'Widget', 'many_to_many']]);
    expect(label.reverse[0].m2m).toBe(res(m, 'Widget').m2m.find((x) => x.name === 'labels'));
    expect(label.reverse[0].field).toBeUndefined();
    expect(res(m, 'Widget').reverse.map((r) => [r.name, r.field?.name])).toEqual([['children', 'parent']]);
    expect(res(m, 'Gadget').reverse).toEqual([]);
  });
});

describe('buildModel: reverse relations in read schemas and expand', () => {
  const model = () =>
    modelOf({
      ...resource(
        'makers',
        'model: Maker',
        'fields:',
        '  title: {type: string}',
        'serializer:',
        '  ReadSerializer:',
        '    fields: [id, title, widgets]',
        '  DetailSerializer:',
        '    fields: [id, widgets: {fields: [id, name], limit: 7}]',
        'viewset:',
        '  expand:',
        '    widgets: {fields: [name], limit: 2}',
      ),
      ...resource(
        'widgets',
        'model: Widget',
        'fields:',
        '  name: {type: string}',
        '  maker: {type: foreign_key, to: Maker, null: true, reverse_name: widgets}',
        'viewset:',
        '  expand:',
        '    maker: {fields: [id, title]}',
      ),
    });

  it('shows a reverse relation as keys (default cap 100) or nested records with their own cap', () => {
    const m = model();
    const maker = res(m, 'Maker');
    const keys = fieldOf(maker.schemas.out, 'widgets');
    expect([keys.kind, keys.value, keys.limit, keys.nullable, keys.reverse]).toEqual(['reverse', 'int', 100, false, maker.reverse[0]]);
    const nested = fieldOf(maker.schemas.detail, 'widgets');
    expect([nested.kind, nested.limit, nested.nested!.target, nested.nested!.fields.map((f) => f.name)]).toEqual([
      'nested_reverse',
      7,
      'Widget',
      ['id', 'name'],
    ]);
  });

  it('models each expandable relation as the nested field ?expand= shows', () => {
    const m = model();
    expect(res(m, 'Maker').expand.map((f) => [f.name, f.kind, f.limit, f.nested!.fields.map((n) => n.name)])).toEqual([
      ['widgets', 'nested_reverse', 2, ['name']],
    ]);
    expect(res(m, 'Widget').expand.map((f) => [f.name, f.kind, f.nullable, f.nested!.fields.map((n) => n.name)])).toEqual([
      ['maker', 'nested_one', true, ['id', 'title']],
    ]);
  });
});

describe('buildModel: names', () => {
  it('derives verbose names, table, route base, tag and 404 keys from a CamelCase model', () => {
    const r = res(modelOf(resource('posts', 'model: BlogPost', 'fields: {title: {type: string}}')), 'BlogPost');
    expect(r).toMatchObject({
      snake: 'blog_post',
      verboseName: 'blog post',
      verboseNamePlural: 'blog posts',
      table: 'blog_posts',
      moduleName: 'blog_posts',
      base: 'blog-posts',
      tag: 'Blog posts',
      verboseKey: 'blog_post',
      classKey: 'blog_post',
      specFile: 'resources/posts.yaml',
    });
  });

  it('uses verbose_name and verbose_name_plural of the resource', () => {
    const r = res(
      modelOf(
        resource('people', 'model: Person', 'verbose_name: human being', 'verbose_name_plural: people', 'fields: {name: {type: string}}'),
      ),
      'Person',
    );
    expect(r).toMatchObject({
      verboseName: 'human being',
      verboseNamePlural: 'people',
      table: 'people',
      base: 'people',
      verboseKey: 'human_being',
      classKey: 'person',
    });
  });

  it('prefers the viewset model_verbose_name(_plural) to verbose_name', () => {
    const m = modelOf({
      ...resource(
        'a',
        'model: Label',
        'verbose_name: label',
        'fields: {text: {type: string}}',
        'viewset:',
        '  model_verbose_name: tag label',
      ),
      ...resource(
        'b',
        'model: Box',
        'fields: {text: {type: string}}',
        'viewset:',
        '  model_verbose_name: crate',
        '  model_verbose_name_plural: crates',
      ),
    });
    expect(res(m, 'Label')).toMatchObject({
      verboseName: 'tag label',
      verboseNamePlural: 'tag labels',
      table: 'labels',
      base: 'tag-labels',
      verboseKey: 'tag_label',
      classKey: 'label',
    });
    // The table follows the resource's own names (Box → boxes); the viewset's display names only change base, tag and 404 key.
    expect(res(m, 'Box')).toMatchObject({
      verboseName: 'crate',
      verboseNamePlural: 'crates',
      table: 'boxes',
      base: 'crates',
      tag: 'Crates',
    });
  });

  it('derives English plurals from the last word of the verbose name', () => {
    const m = modelOf({
      ...resource('a', 'model: Shelf', 'fields: {text: {type: string}}'),
      ...resource('b', 'model: BlogEntry', 'fields: {text: {type: string}}'),
      ...resource('c', 'model: Person', 'verbose_name: staff person', 'fields: {text: {type: string}}'),
      ...resource('d', 'model: Status', 'fields: {text: {type: string}}', 'viewset:', '  model_verbose_name: state'),
    });
    expect(res(m, 'Shelf')).toMatchObject({ verboseNamePlural: 'shelves', table: 'shelves', base: 'shelves' });
    expect(res(m, 'BlogEntry')).toMatchObject({ verboseNamePlural: 'blog entries', table: 'blog_entries', base: 'blog-entries' });
    expect(res(m, 'Person')).toMatchObject({ verboseNamePlural: 'staff people', table: 'staff_people', base: 'staff-people' });
    expect(res(m, 'Status')).toMatchObject({ verboseNamePlural: 'states', table: 'statuses', base: 'states' });
  });

  it('takes the route base from api_route_path without its slashes, keeping the table name', () => {
    const m = modelOf({
      ...resource('a', 'model: Maker', 'fields: {title: {type: string}}', 'viewset:', '  api_route_path: /companies/'),
      ...resource('b', 'model: Part', 'fields: {title: {type: string}}', 'viewset:', '  api_route_path: catalog/parts'),
      ...resource('c', 'model: Note', 'table: memo', 'fields: {title: {type: string}}'),
    });
    expect(res(m, 'Maker')).toMatchObject({ base: 'companies', table: 'makers', moduleName: 'makers' });
    expect(res(m, 'Part').base).toBe('catalog/parts');
    expect(res(m, 'Note')).toMatchObject({ table: 'memo', moduleName: 'memo', base: 'notes' });
  });
});

describe('buildModel: schemas', () => {
  const post = (...rest: string[]) =>
    resource(
      'posts',
      'model: Post',
      'fields:',
      '  title: {type: string, max_length: 50}',
      '  body: {type: text}',
      '  rank: {type: integer, default: 0}',
      '  note: {type: string, null: true}',
      '  created: {type: datetime, auto_now_add: true}',
      '  changed: {type: datetime, auto_now: true}',
      ...rest,
    );

  it('takes each role from the first source: manual schema > serializer_class > serializer section > auto', () => {
    const r = res(
      modelOf(
        post(
          'serializer:',
          '  ReadSerializer: {fields: [id, title]}',
          '  CreateSerializer: {fields: [title, body]}',
          '  UpdateSerializer: {fields: [title]}',
          'viewset:',
          '  serializer_class:',
          '    Meta:',
          '      model: Post',
          '      schema_out: {fields: [id, body]}',
          '      schema_in: {fields: [title, body, rank]}',
          '  schema_out:',
          '    name: PostSummary',
          '    fields: {id: int, title: str}',
        ),
      ),
      'Post',
    );
    expect(r.schemas.out).toMatchObject({ name: 'PostSummary', role: 'out', source: 'manual' });
    expect(names(r.schemas.out)).toEqual(['id', 'title']);
    expect(r.schemas.in).toMatchObject({ name: 'PostIn', role: 'in', source: 'serializer_class' });
    expect(names(r.schemas.in)).toEqual(['title', 'body', 'rank']);
    expect(r.schemas.update).toMatchObject({ name: 'PostUpdate', role: 'update', source: 'serializer' });
    expect(names(r.schemas.update)).toEqual(['title']);
  });

  it('falls back from serializer_class to the serializer section, and to auto', () => {
    const r = res(
      modelOf(
        post(
          'serializer:',
          '  ReadSerializer: {fields: [id, title]}',
          'viewset:',
          '  serializer_class:',
          '    Meta: {model: Post, schema_update: {fields: [body]}}',
        ),
      ),
      'Post',
    );
    expect([r.schemas.out.source, r.schemas.update.source, r.schemas.in.source]).toEqual(['serializer', 'serializer_class', 'auto']);
    expect(names(r.schemas.out)).toEqual(['id', 'title']);
    expect(r.schemas.in.name).toBe('PostIn');
  });

  it('generates every schema from the fields when nothing names them', () => {
    const r = res(modelOf(post()), 'Post');
    for (const role of ['in', 'out', 'update'] as const) expect(r.schemas[role].source).toBe('auto');
    expect(names(r.schemas.out)).toEqual(['id', 'title', 'body', 'rank', 'note', 'created', 'changed']);
    // Auto timestamps and the generated key are not input.
    expect(names(r.schemas.in)).toEqual(['title', 'body', 'rank', 'note']);
    expect(required(r.schemas.in)).toEqual({ title: true, body: true, rank: false, note: false });
    expect(fieldOf(r.schemas.in, 'title').maxLength).toBe(50);
  });

  it('answers retrieve with schema_out when no detail schema is given (hasDetail false)', () => {
    const r = res(modelOf(post('serializer:', '  ReadSerializer: {fields: [id, title]}')), 'Post');
    expect(r.hasDetail).toBe(false);
    expect(r.schemas.detail).toBe(r.schemas.out);
    expect(r.schemas.detail.role).toBe('out');
  });

  it('uses a detail schema from the serializer or the viewset when given', () => {
    const m = modelOf({
      ...post('serializer:', '  DetailSerializer: {fields: [id, title, body]}'),
      ...resource('a', 'model: A', 'fields: {x: {type: string}}', 'viewset:', '  schema_detail: {fields: {id: int, x: str}}'),
    });
    expect(res(m, 'Post').hasDetail).toBe(true);
    expect(res(m, 'Post').schemas.detail).toMatchObject({ name: 'PostDetail', role: 'detail', source: 'serializer' });
    expect(names(res(m, 'Post').schemas.detail)).toEqual(['id', 'title', 'body']);
    expect(res(m, 'A').hasDetail).toBe(true);
    expect(res(m, 'A').schemas.detail).toMatchObject({ name: 'ADetail', source: 'manual' });
  });

  it('does not require optionals', () => {
    const r = res(
      modelOf(post('serializer:', '  CreateSerializer:', '    fields: [title, body]', '    optionals: [[rank, int], [note, str]]')),
      'Post',
    );
    expect(names(r.schemas.in)).toEqual(['title', 'body', 'rank', 'note']);
    expect(required(r.schemas.in)).toEqual({ title: true, body: true, rank: false, note: false });
  });

  it('makes every update field optional, from a serializer section or a manual schema', () => {
    const m = modelOf({
      ...post('serializer:', '  UpdateSerializer:', '    fields: [title, body]', '    optionals: [[rank, int]]'),
      ...resource(
        'a',
        'model: A',
        'fields: {x: {type: string}, y: {type: string}}',
        'viewset:',
        '  schema_update: {fields: {x: str, y: {type: str, required: true}}}',
      ),
    });
    expect(required(res(m, 'Post').schemas.update)).toEqual({ title: false, body: false, rank: false });
    // A manual schema may still require a field explicitly.
    expect(required(res(m, 'A').schemas.update)).toEqual({ x: false, y: true });
  });

  it('makes every field of a generated (auto) update schema optional too (PATCH semantics)', () => {
    const r = res(modelOf(post()), 'Post');
    expect(r.schemas.update.source).toBe('auto');
    expect(names(r.schemas.update)).toEqual(['title', 'body', 'rank', 'note']);
    expect(required(r.schemas.update)).toEqual({ title: false, body: false, rank: false, note: false });
  });

  it('reads an excludes-only section as the auto fields minus the excluded ones', () => {
    const r = res(
      modelOf(post('serializer:', '  ReadSerializer: {excludes: [body, changed]}', '  CreateSerializer: {excludes: [note]}')),
      'Post',
    );
    expect(r.schemas.out.source).toBe('serializer');
    expect(names(r.schemas.out)).toEqual(['id', 'title', 'rank', 'note', 'created']);
    expect(r.schemas.in.source).toBe('serializer');
    expect(names(r.schemas.in)).toEqual(['title', 'body', 'rank']);
  });

  it('falls through an empty section to the next source', () => {
    const r = res(
      modelOf(
        post(
          'serializer:',
          '  ReadSerializer: {fields: [id]}',
          'viewset:',
          '  serializer_class:',
          '    Meta: {model: Post, schema_out: {}}',
        ),
      ),
      'Post',
    );
    expect(r.schemas.out.source).toBe('serializer');
    expect(names(r.schemas.out)).toEqual(['id']);
  });

  it('never puts a password field in a generated output schema, but takes it as input', () => {
    const m = modelOf({
      ...user,
      ...resource(
        'admins',
        'model: Admin',
        'fields: {secret: {type: password}, name: {type: string}}',
        'serializer:',
        '  ReadSerializer: {excludes: [name]}',
      ),
    });
    const u = res(m, 'User');
    expect(names(u.schemas.out)).toEqual(['id', 'username', 'bio', 'joined']);
    expect(names(u.schemas.detail)).not.toContain('password');
    expect(fieldOf(u.schemas.in, 'password')).toMatchObject({ value: 'str', required: true });
    expect(names(u.schemas.update)).toContain('password');
    // An excludes-only read section starts from the same auto fields, so the password stays out.
    expect(names(res(m, 'Admin').schemas.out)).toEqual(['id']);
  });

  it('nests related records with the named fields of the target', () => {
    const r = res(
      modelOf({
        ...user,
        ...post(
          '  author: {type: foreign_key, to: User}',
          'serializer:',
          '  DetailSerializer:',
          '    fields: [id, author: {fields: [id, username]}]',
        ),
      }),
      'Post',
    );
    const author = fieldOf(r.schemas.detail, 'author');
    expect(author.kind).toBe('nested_one');
    expect(author.nested?.target).toBe('User');
    expect(author.nested?.fields.map((f) => [f.name, f.value])).toEqual([
      ['id', 'int'],
      ['username', 'str'],
    ]);
    expect(fieldOf(r.schemas.out, 'author').kind).toBe('foreign_key');
  });
});

describe('buildModel: operations', () => {
  const ops = (...viewset: string[]) =>
    res(
      modelOf(resource('posts', 'model: BlogPost', 'fields: {title: {type: string}}', ...(viewset.length ? ['viewset:', ...viewset] : []))),
      'BlogPost',
    ).operations;

  it('gives an APIViewSet all five operations with their methods, paths, statuses and ids', () => {
    expect(ops().map((o) => [o.kind, o.method, o.pathKind, o.status, o.operationId])).toEqual([
      ['create', 'post', 'collection', 201, 'create_blog_post'],
      ['list', 'get', 'collection', 200, 'list_blog_posts'],
      ['retrieve', 'get', 'item', 200, 'retrieve_blog_post'],
      ['update', 'patch', 'itemSlash', 200, 'update_blog_post'],
      ['delete', 'delete', 'itemSlash', 204, 'delete_blog_post'],
    ]);
  });

  it('limits the operations to the viewset class', () => {
    expect(ops('  class: APIViewSet').map((o) => o.kind)).toEqual(['create', 'list', 'retrieve', 'update', 'delete']);
    expect(ops('  class: ReadOnlyViewSet').map((o) => o.kind)).toEqual(['list', 'retrieve']);
    expect(ops('  class: WriteOnlyViewSet').map((o) => o.kind)).toEqual(['create', 'update', 'delete']);
  });

  it('drops disabled operations, and all of them with "all"', () => {
    expect(ops('  disable: [delete, update]').map((o) => o.kind)).toEqual(['create', 'list', 'retrieve']);
    expect(ops('  class: ReadOnlyViewSet', '  disable: [list]').map((o) => o.kind)).toEqual(['retrieve']);
    expect(ops('  disable: [all]')).toEqual([]);
  });

  it('uses the default summaries, and <op>_docs as the description', () => {
    const o = ops('  retrieve_docs: Retrieve one post.');
    expect(Object.fromEntries(o.map((x) => [x.kind, x.summary]))).toEqual({
      create: 'Create a new object.',
      list: 'List all objects.',
      retrieve: 'Retrieve a specific object by its primary key.',
      update: 'Update an object by its primary key.',
      delete: 'Delete an object by its primary key.',
    });
    expect(Object.fromEntries(o.map((x) => [x.kind, x.description]))).toEqual({
      create: undefined,
      list: undefined,
      retrieve: 'Retrieve one post.',
      update: undefined,
      delete: undefined,
    });
  });
});

describe('buildModel: auth', () => {
  it('resolveAuth: a per-operation value wins unless NOT_SET or absent; null is public', () => {
    expect(resolveAuth(undefined, undefined)).toBeNull();
    expect(resolveAuth('NOT_SET', undefined)).toBeNull();
    expect(resolveAuth('NOT_SET', 'NOT_SET')).toBeNull();
    expect(resolveAuth(undefined, ['JWTAuth'])).toEqual(['JWTAuth']);
    expect(resolveAuth('NOT_SET', ['JWTAuth'])).toEqual(['JWTAuth']);
    expect(resolveAuth(null, ['JWTAuth'])).toBeNull();
    expect(resolveAuth(['AdminAuth'], ['JWTAuth'])).toEqual(['AdminAuth']);
    expect(resolveAuth(['AdminAuth'], null)).toEqual(['AdminAuth']);
    expect(resolveAuth(undefined, null)).toBeNull();
  });

  const authOf = (...viewset: string[]) =>
    Object.fromEntries(
      res(modelOf(resource('posts', 'model: Post', 'fields: {title: {type: string}}', 'viewset:', ...viewset)), 'Post').operations.map(
        (o) => [o.kind, o.auth],
      ),
    );

  it('applies get_auth to list and retrieve, and auth to the other operations', () => {
    expect(authOf('  auth: [JWTAuth]', '  get_auth: null')).toEqual({
      create: ['JWTAuth'],
      list: null,
      retrieve: null,
      update: ['JWTAuth'],
      delete: ['JWTAuth'],
    });
    expect(authOf('  get_auth: [JWTAuth]', '  auth: [AdminAuth]')).toEqual({
      create: ['AdminAuth'],
      list: ['JWTAuth'],
      retrieve: ['JWTAuth'],
      update: ['AdminAuth'],
      delete: ['AdminAuth'],
    });
  });

  it('takes post_auth, patch_auth and delete_auth per operation, NOT_SET inheriting auth', () => {
    expect(authOf('  auth: [JWTAuth]', '  post_auth: NOT_SET', '  patch_auth: [AdminAuth]', '  delete_auth: [SuperuserAuth]')).toEqual({
      create: ['JWTAuth'],
      list: ['JWTAuth'],
      retrieve: ['JWTAuth'],
      update: ['AdminAuth'],
      delete: ['SuperuserAuth'],
    });
  });

  it('is public everywhere without any auth setting, or with auth: null / NOT_SET', () => {
    const publicOps = { create: null, list: null, retrieve: null, update: null, delete: null };
    expect(authOf('  disable: []')).toEqual(publicOps);
    expect(authOf('  auth: null')).toEqual(publicOps);
    expect(authOf('  auth: NOT_SET')).toEqual(publicOps);
    expect(authOf('  auth: NOT_SET', '  get_auth: [JWTAuth]')).toEqual({ ...publicOps, list: ['JWTAuth'], retrieve: ['JWTAuth'] });
  });
});

describe('buildModel: auth.default_write_auth', () => {
  const WITH_DEFAULT = `${SERVICE}auth:\n  default_write_auth: [JWTAuth]\n`;
  const modelWith = (service: string, ...viewset: string[]) =>
    res(
      modelOf({
        'service.yaml': service,
        ...resource('tags', 'model: Tag', 'fields: {name: {type: string}}', 'serializer: {ReadSerializer: {fields: [id, name]}}'),
        ...resource(
          'posts',
          'model: Post',
          'hooks: hooks/posts.ts',
          'fields:',
          '  title: {type: string}',
          '  tags: {type: many_to_many, to: Tag}',
          '  deleted_at: {type: datetime, null: true}',
          'viewset:',
          '  soft_delete: {hard_delete_roles: [staff]}',
          '  bulk: {operations: [create]}',
          '  m2m_relations:',
          '    - {model: Tag, related_name: tags}',
          '  actions:',
          '    publish: {handler: publish, detail: true, methods: [post]}',
          '    stats: {handler: stats, detail: false, methods: [get]}',
          '  endpoints:',
          '    - {path: /posts/ping/, method: api_post, handler: ping}',
          '    - {path: /posts/pong/, method: api_get, handler: pong}',
          ...viewset,
        ),
        'hooks/posts.ts': ['publish', 'stats', 'ping', 'pong'].map((h) => `export const ${h} = (_ctx: unknown) => ({});\n`).join(''),
      }),
      'Post',
    );
  const authsOf = (r: Resource) => ({
    ...Object.fromEntries(r.operations.map((o) => [o.kind, o.auth])),
    bulk_create: r.bulk[0].operation.auth,
    restore: r.softDelete?.restore.auth,
    hard_delete: r.softDelete?.hardDelete?.auth,
    relation_get: r.relations[0].getAuth,
    relation_post: r.relations[0].postAuth,
    ...Object.fromEntries(r.actions.map((a) => [a.name, a.auth])),
    ...Object.fromEntries(r.endpoints.map((e) => [e.handler, e.auth])),
  });

  it('gives writes left NOT_SET its authenticators, and leaves reads public', () => {
    expect(authsOf(modelWith(WITH_DEFAULT))).toEqual({
      create: ['JWTAuth'],
      list: null,
      retrieve: null,
      update: ['JWTAuth'],
      delete: ['JWTAuth'],
      bulk_create: ['JWTAuth'],
      restore: ['JWTAuth'],
      hard_delete: ['JWTAuth'],
      relation_get: null,
      relation_post: ['JWTAuth'],
      publish: ['JWTAuth'],
      stats: null,
      ping: ['JWTAuth'],
      pong: null,
    });
  });

  it('yields to any auth the spec writes, null included', () => {
    expect(authsOf(modelWith(WITH_DEFAULT, '  auth: null'))).toEqual({
      create: null,
      list: null,
      retrieve: null,
      update: null,
      delete: null,
      bulk_create: null,
      restore: null,
      hard_delete: null,
      relation_get: null,
      relation_post: null,
      publish: null,
      stats: null,
      ping: ['JWTAuth'],
      pong: null,
    });
    const own = modelWith(WITH_DEFAULT, '  post_auth: [AdminAuth]', '  delete_auth: null');
    expect(authsOf(own)).toMatchObject({ create: ['AdminAuth'], update: ['JWTAuth'], delete: null, restore: null });
  });

  it('without it, NOT_SET is public as the seed says', () => {
    const all = authsOf(modelWith(SERVICE));
    expect(Object.values(all).every((a) => a === null)).toBe(true);
    expect(Object.keys(all)).toHaveLength(14);
  });
});

describe('buildModel: soft delete', () => {
  const softDeleted = (softDelete: string, field: string) =>
    res(
      modelOf(
        resource(
          'posts',
          'model: Post',
          'fields:',
          '  title: {type: string}',
          `  ${field}: {type: datetime, null: true}`,
          'viewset:',
          `  soft_delete: ${softDelete}`,
        ),
      ),
      'Post',
    );

  it('marks rows with deleted_at unless soft_delete names a field, and no write schema takes it', () => {
    for (const [softDelete, field] of [
      ['true', 'deleted_at'],
      ['{}', 'deleted_at'],
      ['{field: removed_at}', 'removed_at'],
    ]) {
      const r = softDeleted(softDelete, field);
      expect(r.softDelete?.field.name).toBe(field);
      expect(names(r.schemas.in)).toEqual(['title']);
      expect(names(r.schemas.update)).toEqual(['title']);
      expect(names(r.schemas.out)).toEqual(['id', 'title', field]);
    }
  });

  it('the field is read the same from a spec the meta-schema rejected parts of (as the checks read it)', () => {
    expect(softDeleteFieldName(true)).toBe('deleted_at');
    expect(softDeleteFieldName({ field: 'removed_at' })).toBe('removed_at');
    expect(softDeleteFieldName({ field: Symbol('invalid') })).toBe('deleted_at');
    for (const none of [undefined, false, null, 'yes', [], Symbol('invalid')]) expect(softDeleteFieldName(none)).toBeUndefined();
  });
});

describe('buildModel: pagination and ordering', () => {
  const paginationOf = (value: string, extra: Record<string, string> = {}) =>
    res(
      modelOf({
        ...resource(
          'posts',
          'model: Post',
          'hooks: hooks/posts.ts',
          'fields: {title: {type: string}}',
          'viewset:',
          `  pagination_class: ${value}`,
        ),
        'hooks/posts.ts': 'export class TwoPerPage {}\n',
        ...extra,
      }),
      'Post',
    ).pagination;

  it('defaults to the built-in PageNumberPagination', () => {
    const r = res(modelOf(resource('posts', 'model: Post', 'fields: {title: {type: string}}')), 'Post');
    expect(r.pagination).toEqual({ class: 'PageNumberPagination', builtin: true, options: {} });
  });

  it('turns pagination off with null', () => {
    expect(paginationOf('null')).toBeNull();
  });

  it('accepts a built-in class by name, or with page sizes', () => {
    expect(paginationOf('LimitOffsetPagination')).toEqual({ class: 'LimitOffsetPagination', builtin: true, options: {} });
    expect(paginationOf('PageNumberResultsPagination')).toEqual({ class: 'PageNumberResultsPagination', builtin: true, options: {} });
    expect(paginationOf('{class: PageNumberPagination, page_size: 3, max_page_size: 4}')).toEqual({
      class: 'PageNumberPagination',
      builtin: true,
      options: { page_size: 3, max_page_size: 4 },
    });
  });

  it('marks a custom paginator (a hook export) as not built in, keeping its page sizes', () => {
    expect(paginationOf('TwoPerPage')).toEqual({ class: 'TwoPerPage', builtin: false, options: {} });
    const custom = paginationOf('{class: TwoPerPage, page_size: 2}');
    expect(custom).toMatchObject({ class: 'TwoPerPage', builtin: false, options: { page_size: 2 } });
    expect(custom?.options.max_page_size).toBeUndefined();
  });

  it('maps ordering fields to columns (foreign keys to <field>_id) and parses default_ordering', () => {
    const r = res(
      modelOf({
        ...user,
        ...resource(
          'posts',
          'model: Post',
          'fields:',
          '  title: {type: string}',
          '  author: {type: foreign_key, to: User}',
          '  created: {type: datetime, auto_now_add: true}',
          'viewset:',
          '  ordering_fields: [title, author, created, id]',
          '  default_ordering: -created,title',
        ),
      }),
      'Post',
    );
    expect(r.ordering.fields).toEqual([
      { name: 'title', column: 'title' },
      { name: 'author', column: 'author_id' },
      { name: 'created', column: 'created' },
      { name: 'id', column: 'id' },
    ]);
    expect(r.ordering.default).toEqual([
      { column: 'created', order: 'desc' },
      { column: 'title', order: 'asc' },
    ]);
  });

  it('has no ordering unless the spec asks for one', () => {
    const r = res(modelOf(resource('posts', 'model: Post', 'fields: {title: {type: string}}')), 'Post');
    expect(r.ordering).toEqual({ fields: [], default: [] });
  });
});

describe('extra_fields', () => {
  const item = (name: string, model: string, ...viewset: string[]) =>
    resource(
      name,
      `model: ${model}`,
      'fields:',
      '  label: {type: string, max_length: 20}',
      ...(viewset.length ? ['viewset:', ...viewset] : []),
    );

  it('ignores keys that are no field by default, in the service and each resource', () => {
    const model = modelOf({ ...item('boxes', 'Box') });
    expect({ service: model.extraFields, boxes: res(model, 'Box').extraFields }).toEqual({ service: 'ignore', boxes: 'ignore' });
  });

  it("takes the service file's setting in each resource whose viewset says nothing, the viewset's otherwise", () => {
    const model = modelOf({
      'service.yaml': `${SERVICE}extra_fields: forbid\n`,
      ...item('boxes', 'Box'),
      ...item('bins', 'Bin', '  extra_fields: ignore'),
    });
    expect({ service: model.extraFields, boxes: res(model, 'Box').extraFields, bins: res(model, 'Bin').extraFields }).toEqual({
      service: 'forbid',
      boxes: 'forbid',
      bins: 'ignore',
    });
    // The request schemas refuse the keys they do not know (a strict object); the response schemas do
    // not. The update body is the create body's `.partial()`, which keeps what it does with other keys.
    const context = { runtimeFromRoot: '@svcgen/runtime', specsFromRoot: '../specs', specsName: 'specs' };
    const { files } = renderService(model, context, firstBuildResults(model));
    const objects = (file: string) =>
      [...files.get(file)!.matchAll(/export const (\w+) = (?:z\s*\.(\w+)\(|(\w+)\.partial\(\))/g)].map(
        (m) => `${m[1]} ${m[2] ?? `${m[3]}.partial()`}`,
      );
    expect(objects('resources/boxes/schemas.ts')).toEqual([
      'BoxIn strictObject',
      'BoxOut object',
      'BoxUpdate BoxIn.partial()',
      'BoxParams object',
    ]);
    expect(objects('resources/bins/schemas.ts')).toEqual([
      'BinIn object',
      'BinOut object',
      'BinUpdate BinIn.partial()',
      'BinParams object',
    ]);
  });
});
