import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { formatDiagnostic, sortDiagnostics } from '../../generator/load/diagnostics';
import { loadSpecs } from '../../generator/load/load';
import { checkModel, describeSpecs } from '../../generator/model/check-model';
import { checkSpecs } from '../../generator/pipeline';
import { validateSpecs } from '../../generator/validate/checks';

const FIXTURES = path.resolve(__dirname, '../fixtures');
/** Diagnostic cases: `specs/` and `expected.txt` (test/generator/cases.test.ts also runs them through `svcgen validate`). */
const CASES = path.resolve(__dirname, '../cases');

/**
 * Loader, validator and model-check diagnostics of a specs directory (not the hooks modules'
 * exports: see hook-exports.test.ts), formatted with paths relative to it.
 */
function diagnosticsOf(dir: string): string[] {
  const loaded = loadSpecs(dir, dir);
  const validation = validateSpecs(loaded);
  const model = checkModel(describeSpecs(loaded, validation.documents));
  return sortDiagnostics([...loaded.diagnostics, ...validation.diagnostics, ...model]).map(formatDiagnostic);
}

/** Everything `svcgen validate` reports, the hooks modules' exports and signatures included. */
function allDiagnosticsOf(dir: string): string[] {
  return checkSpecs(loadSpecs(dir, dir)).diagnostics.map(formatDiagnostic);
}

const SERVICE = 'title: Test API\nversion: 1.0.0\n';

/** Writes `files` (path → text) into a fresh directory and returns its diagnostics. */
function check(files: Record<string, string>): string[] {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svcgen-validate-'));
  try {
    for (const [name, text] of Object.entries({ 'service.yaml': SERVICE, ...files })) {
      fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
      fs.writeFileSync(path.join(dir, name), text);
    }
    return diagnosticsOf(dir);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** A resource file `resources/<name>.yaml` from lines. */
const resource = (name: string, ...lines: string[]) => ({ [`resources/${name}.yaml`]: lines.join('\n') + '\n' });

const user = resource(
  'users',
  'model: User',
  'fields:',
  '  username: {type: string, max_length: 150}',
  '  password: {type: password}',
  '  code: {type: string, max_length: 10}',
);

describe('validateSpecs: fixtures', () => {
  const cases = fs
    .readdirSync(CASES)
    .filter((name) => fs.existsSync(path.join(CASES, name, 'expected.txt')))
    .sort();

  it('has the expected cases', () => {
    expect(cases).toEqual(expect.arrayContaining(['five-mistakes', 'unknown-setting', 'duplicate-names', 'bad-lookup', 'm2m-config']));
  });

  it.each(cases)('%s reports exactly expected.txt', (name) => {
    const expected = fs
      .readFileSync(path.join(CASES, name, 'expected.txt'), 'utf8')
      .split('\n')
      .filter(Boolean);
    expect(allDiagnosticsOf(path.join(CASES, name, 'specs'))).toEqual(expected);
  });

  it('reports all five mistakes of one file in one run', () => {
    expect(diagnosticsOf(path.join(CASES, 'five-mistakes', 'specs'))).toHaveLength(5);
  });

  it('accepts the blog specs', () => {
    expect(diagnosticsOf(path.resolve(__dirname, '../../specs'))).toEqual([]);
  });

  it('accepts a spec using most features (hooks, filters, m2m, uuid keys, choices, manual schemas)', () => {
    expect(diagnosticsOf(path.join(FIXTURES, 'valid', 'full'))).toEqual([]);
  });

  it('does not change the loaded data', () => {
    const dir = path.join(CASES, 'five-mistakes', 'specs');
    const loaded = loadSpecs(dir, dir);
    const before = JSON.stringify(loaded.resources.map((r) => r.data));
    validateSpecs(loaded);
    expect(JSON.stringify(loaded.resources.map((r) => r.data))).toBe(before);
  });
});

describe('validateSpecs: meta-schema messages', () => {
  it('names an unknown key at the key, suggesting the closest one', () => {
    expect(check(resource('a', 'model: A', 'fields:', '  x: {type: string}', 'verbose_nme: a'))).toEqual([
      'resources/a.yaml:4:1: unknown key "verbose_nme" (did you mean "verbose_name"?)',
    ]);
  });

  it('lists the allowed keys of a small map', () => {
    expect(
      check(
        resource(
          'a',
          'model: A',
          'fields: {x: {type: string}}',
          'viewset:',
          '  query_params:',
          '    x: {type: str, foo: 1}',
          '  filter_mixins: [IcontainsFilterViewSetMixin]',
        ),
      ),
    ).toEqual(['resources/a.yaml:5:20: unknown key "foo" (expected one of: type, default, description)']);
  });

  it('places a missing required key at the parent map', () => {
    expect(check(resource('a', 'model: A', 'fields:', '  x: {max_length: 3}'))).toEqual([
      'resources/a.yaml:3:6: missing required key "type"',
    ]);
  });

  it('suggests the closest allowed value of an enum', () => {
    expect(check(resource('a', 'model: A', 'fields:', '  x: {type: strin}'))).toEqual([
      'resources/a.yaml:3:13: unknown value "strin" (did you mean "string"?)',
    ]);
  });

  it('says what a name must look like', () => {
    expect(check(resource('a', 'model: blog_post', 'fields:', '  Title: {type: string}'))).toEqual([
      'resources/a.yaml:1:8: invalid name "blog_post": use letters and digits, starting with an uppercase letter (like BlogPost)',
      'resources/a.yaml:3:3: invalid name "Title": use lowercase letters, digits and _, starting with a letter (like blog_post)',
    ]);
  });

  it('collapses anyOf into one message per node', () => {
    const out = check(
      resource(
        'a',
        'model: A',
        'fields: {x: {type: string}}',
        'viewset:',
        '  auth: FOO',
        '  pagination_class: {class: PageNumberPagination, size: 3}',
        '  query_params:',
        '    a: [strr, null]',
        '    b: 5',
      ),
    );
    expect(out).toEqual([
      'resources/a.yaml:4:9: expected one of: null, "NOT_SET", a list',
      'resources/a.yaml:5:51: unknown key "size" (expected one of: class, page_size, max_page_size)',
      'resources/a.yaml:7:9: unknown value "strr" (did you mean "str"?)',
      'resources/a.yaml:8:8: expected one of: a list, a map',
    ]);
  });

  it('reports a type mismatch with what was found', () => {
    expect(check({ 'service.yaml': `${SERVICE}settings:\n  SVC_DEBUG: "yes"\n` })).toEqual([
      'service.yaml:4:14: expected true or false, got a string',
    ]);
  });

  it('auth.cookies takes true, false or "only", and says so', () => {
    expect(check({ 'service.yaml': `${SERVICE}auth:\n  cookies: only\n` })).toEqual([]);
    expect(check({ 'service.yaml': `${SERVICE}auth:\n  cookies: always\n` })).toEqual([
      'service.yaml:4:12: expected one of: true or false, "only"',
    ]);
  });

  it('reports identical messages at one position once', () => {
    const out = check(
      resource('a', 'model: A', 'fields: {x: {type: string}}', 'serializer:', '  CreateSerializer:', '    optionals: [[x, str, y]]'),
    );
    expect(out).toEqual(['resources/a.yaml:5:17: expected at most 2 items']);
  });

  it('follows escaped JSON pointers back to the YAML node', () => {
    const out = check(resource('a', 'model: A', 'fields: {x: {type: string}}', 'viewset:', '  query_params:', '    "a/b~c": 5'));
    expect(out).toEqual([
      'resources/a.yaml:5:5: invalid name "a/b~c": use lowercase letters, digits and _, starting with a letter (like blog_post)',
      'resources/a.yaml:5:14: expected one of: a list, a map',
    ]);
  });

  it('keeps a field whose spec is invalid, so its uses are not reported again', () => {
    const out = check(resource('a', 'model: A', 'fields:', '  x: 5', 'serializer:', '  ReadSerializer: {fields: [id, x]}'));
    expect(out).toEqual(['resources/a.yaml:3:6: expected a map, got an integer']);
  });

  it('reports an empty file', () => {
    expect(check({ 'resources/a.yaml': '' })).toEqual(['resources/a.yaml:1:1: the file is empty: expected a map']);
  });
});

describe('validateSpecs: fields', () => {
  it('allows one primary key of a key type, and "id" only as the primary key', () => {
    const out = check(
      resource(
        'a',
        'model: A',
        'fields:',
        '  id: {type: integer}',
        '  b: {type: json, primary_key: true}',
        '  c: {type: uuid, primary_key: true}',
      ),
    );
    expect(out).toEqual([
      'resources/a.yaml:3:3: a field named "id" must be the primary key: add primary_key: true or rename it',
      'resources/a.yaml:4:13: a primary key must be integer, big_integer, uuid or string, not json',
      'resources/a.yaml:5:19: only one field may be the primary key, and "b" already is',
    ]);
  });

  it('allows options only on the types they apply to', () => {
    const out = check(
      resource(
        'a',
        'model: A',
        'fields:',
        '  n: {type: integer, max_length: 3, to: A}',
        '  d: {type: string, auto_now: true, decimal_places: 2}',
        '  m: {type: many_to_many, to: A, null: true, unique: true, on_delete: cascade}',
      ),
    );
    expect(out).toEqual([
      'resources/a.yaml:3:22: "max_length" only applies to string, email, url, password and list fields, not integer',
      'resources/a.yaml:3:37: "to" only applies to foreign_key and many_to_many fields, not integer',
      'resources/a.yaml:4:21: "auto_now" only applies to date and datetime fields, not string',
      'resources/a.yaml:4:37: "decimal_places" only applies to decimal fields, not string',
      'resources/a.yaml:5:34: "null" is not allowed on a many_to_many field',
      'resources/a.yaml:5:46: "unique" is not allowed on a many_to_many field',
      'resources/a.yaml:5:60: "on_delete" only applies to foreign_key fields, not many_to_many',
    ]);
  });

  it('takes ignore_case on a unique string, email or url field only', () => {
    const out = check(
      resource(
        'a',
        'model: A',
        'fields:',
        '  s: {type: string, max_length: 20, unique: true, ignore_case: true}',
        '  t: {type: string, max_length: 20, ignore_case: true}',
        '  n: {type: integer, unique: true, ignore_case: true}',
      ),
    );
    expect(out).toEqual([
      'resources/a.yaml:4:37: "ignore_case" makes a unique field unique whatever the case of its letters: it needs "unique: true" (and no "primary_key")',
      'resources/a.yaml:5:36: "ignore_case" only applies to string, email and url fields, not integer',
    ]);
  });

  it('checks relations: a known target, "to" present, set_null on a nullable field', () => {
    const out = check({
      ...user,
      ...resource(
        'a',
        'model: A',
        'fields:',
        '  owner: {type: foreign_key, to: Usr}',
        '  editor: {type: foreign_key}',
        '  reviewer: {type: foreign_key, to: User, on_delete: set_null}',
      ),
    });
    expect(out).toEqual([
      'resources/a.yaml:3:34: relation to unknown resource "Usr" (did you mean "User"?)',
      'resources/a.yaml:4:11: a foreign_key field needs "to" naming the related model',
      'resources/a.yaml:5:54: on_delete: set_null needs null: true on this field',
    ]);
  });

  it('checks defaults against the field type, max_length and choices', () => {
    const out = check(
      resource(
        'a',
        'model: A',
        'fields:',
        '  flag: {type: boolean, default: "yes"}',
        '  day: {type: date, default: "2024-02-30"}',
        '  at: {type: datetime, default: "2024-01-31 12:00"}',
        '  code: {type: string, max_length: 2, default: abc}',
        '  size: {type: string, choices: [s, m], default: l}',
        '  rank: {type: integer, choices: [1, two]}',
        '  note: {type: text, default: null}',
        '  price: {type: decimal, default: "1.5x"}',
        '  data: {type: json, default: [1, 2]}',
      ),
    );
    expect(out).toEqual([
      'resources/a.yaml:3:34: default "yes" does not fit boolean field "flag": expected true or false',
      'resources/a.yaml:4:30: default "2024-02-30" does not fit date field "day": expected a date like 2024-01-31',
      'resources/a.yaml:6:48: default is 3 characters long, more than max_length 2',
      'resources/a.yaml:7:50: default "l" is not one of the choices: s, m',
      'resources/a.yaml:8:38: choice "two" does not fit integer field "rank": expected an integer',
      'resources/a.yaml:9:31: default is null but the field is not nullable: add null: true',
      'resources/a.yaml:10:35: default "1.5x" does not fit decimal field "price": expected a number or a decimal string like "9.99"',
    ]);
  });

  it('checks a foreign key default against the target primary key', () => {
    const out = check({ ...user, ...resource('a', 'model: A', 'fields:', '  owner: {type: foreign_key, to: User, default: me}') });
    expect(out).toEqual(['resources/a.yaml:3:49: default "me" does not fit foreign_key field "owner": expected an integer']);
  });
});

describe('validateSpecs: schemas', () => {
  it('checks serializer sections against the fields, including the implicit id', () => {
    const out = check({
      ...user,
      ...resource(
        'a',
        'model: A',
        'fields:',
        '  title: {type: string}',
        '  owner: {type: foreign_key, to: User}',
        'serializer:',
        '  ReadSerializer:',
        '    fields: [id, title, titel]',
        '    excludes: [title]',
        '  DetailSerializer:',
        '    fields:',
        '      - title: {fields: [id]}',
        '      - owner: {fields: [id, username, email]}',
        '  CreateSerializer:',
        '    fields: [title, owner: {fields: [id]}]',
      ),
    });
    expect(out).toEqual([
      'resources/a.yaml:7:25: schema field "titel" is not a field of A (did you mean "title"?)',
      'resources/a.yaml:8:16: "title" is in both fields and excludes of ReadSerializer: keep one',
      'resources/a.yaml:11:9: nested field "title" must be a foreign_key or many_to_many field, not string',
      'resources/a.yaml:12:40: schema field "email" is not a field of User',
      'resources/a.yaml:14:21: CreateSerializer takes related records by key: list "owner" without nested fields',
    ]);
  });

  it('never returns a password field', () => {
    const out = check({
      ...user,
      ...resource(
        'a',
        'model: A',
        'fields:',
        '  owner: {type: foreign_key, to: User}',
        'serializer:',
        '  DetailSerializer:',
        '    fields: [id, owner: {fields: [id, password]}]',
      ),
      'resources/users.yaml': user['resources/users.yaml'] + 'serializer:\n  ReadSerializer:\n    fields: [id, password]\n',
    });
    expect(out).toEqual([
      'resources/a.yaml:6:39: password field "password" may not be returned by DetailSerializer: remove it',
      'resources/users.yaml:8:18: password field "password" may not be returned by ReadSerializer: remove it',
    ]);
  });

  it('checks optionals types, foreign keys by the target primary key type', () => {
    const out = check({
      ...resource('codes', 'model: Code', 'fields:', '  key: {type: string, primary_key: true}'),
      ...resource(
        'a',
        'model: A',
        'fields:',
        '  code: {type: foreign_key, to: Code}',
        '  when: {type: date}',
        'serializer:',
        '  UpdateSerializer:',
        '    optionals: [[code, int], [when, str], [when, date]]',
      ),
    });
    expect(out).toEqual([
      'resources/a.yaml:7:24: optionals type "int" does not match field "code" (foreign_key to Code, expects str)',
      'resources/a.yaml:7:44: "when" is listed twice in the optionals of UpdateSerializer',
    ]);
  });

  it('checks serializer_class and manual viewset schemas', () => {
    const out = check(
      resource(
        'a',
        'model: A',
        'fields: {title: {type: string}}',
        'viewset:',
        '  serializer_class:',
        '    Meta: {model: B, schema_in: {fields: [title]}}',
        '  schema_out:',
        '    fields: {id: int, title: int, body: str}',
      ),
    );
    expect(out).toEqual([
      "resources/a.yaml:5:19: serializer_class.Meta.model must be A, this resource's model, not B",
      'resources/a.yaml:7:30: schema type "int" does not match field "title" (string, expects str)',
      'resources/a.yaml:7:35: schema field "body" is not a field of A',
    ]);
  });
});

describe('validateSpecs: viewset', () => {
  const article = (...viewset: string[]) =>
    resource('a', 'model: A', 'fields:', '  title: {type: string}', '  tags: {type: many_to_many, to: A}', 'viewset:', ...viewset);

  it('checks ordering_fields and default_ordering', () => {
    const out = check(article('  ordering_fields: [title, tags, size]', '  default_ordering: -id,title'));
    expect(out).toEqual([
      'resources/a.yaml:6:28: cannot order by many_to_many field "tags"',
      'resources/a.yaml:6:34: ordering field "size" is not a field of A',
      'resources/a.yaml:7:21: default ordering field "id" is not in ordering_fields: add it there',
    ]);
  });

  it('rejects a redundant "all" in disable', () => {
    expect(check(article('  disable: [all, list]'))).toEqual([
      'resources/a.yaml:6:12: "all" already disables every operation: remove the other entries',
    ]);
  });

  it('rejects settings for operations the viewset class lacks', () => {
    expect(check(article('  class: ReadOnlyViewSet', '  post_auth: [JWTAuth]', '  delete_docs: gone', '  get_auth: null'))).toEqual([
      'resources/a.yaml:7:3: ReadOnlyViewSet has no create operation: remove "post_auth"',
      'resources/a.yaml:8:3: ReadOnlyViewSet has no delete operation: remove "delete_docs"',
    ]);
  });

  it('rejects query parameters that clash with each other or with the list parameters', () => {
    const out = check(
      article(
        '  query_params: {page: [int, null], title: [str, null]}',
        '  filters_match_cases:',
        '    - query_param: title',
        '      cases: {true: {query_filter: {title: a}}, false: {query_filter: {title: b}}}',
      ),
    );
    expect(out).toEqual([
      'resources/a.yaml:6:18: query parameter "page" clashes with the list endpoint\'s own "page": rename it',
      'resources/a.yaml:8:20: duplicate query parameter "title": already defined in query_params',
    ]);
  });

  it('walks lookups through many_to_many relations and nested and/or/not', () => {
    const out = check(
      article(
        '  relations_filters:',
        '    - {query_param: tag, query_filter: tags__title__icontains, filter_type: [str, null]}',
        '    - {query_param: tags_in, query_filter: tags__in, filter_type: [list, null]}',
        '  filters_match_cases:',
        '    - query_param: q',
        '      cases:',
        '        true: {query_filter: {and: [{title: a}, {not: {tags__titel: b}}]}}',
        '        false: {query_filter: {or: [], title__in: x}}',
      ),
    );
    expect(out).toEqual([
      'resources/a.yaml:12:56: unknown field "titel" in lookup "tags__titel" (A → A) (did you mean "title"?)',
      'resources/a.yaml:13:32: "or" must be the only key of its map: wrap the other lookups in it',
    ]);
  });

  it('checks m2m relations against the fields', () => {
    const out = check(
      article(
        '  m2m_relations:',
        '    - {model: B, related_name: tags}',
        '    - {model: A, related_name: tags, serializer_class: {Meta: {model: B}}}',
      ),
    );
    expect(out).toEqual([
      'resources/a.yaml:7:15: m2m relation to unknown resource "B"',
      'resources/a.yaml:7:15: many_to_many field "tags" points to A, not B',
      'resources/a.yaml:8:32: duplicate related_name "tags": another relation already uses it',
      "resources/a.yaml:8:71: serializer_class.Meta.model must be A, the relation's model, not B",
    ]);
  });
});

describe('validateSpecs: service and hooks', () => {
  it('checks auth.user_model and its extra claims', () => {
    const out = check({ ...user, 'service.yaml': `${SERVICE}auth:\n  user_model: User\n  extra_claims: [username, is_staff]\n` });
    expect(out).toEqual(['service.yaml:5:28: extra claim "is_staff" is not a field of User']);
  });

  it('requires the hooks module to exist', () => {
    const out = check({ ...resource('a', 'model: A', 'hooks: hooks/a.ts', 'fields: {x: {type: string}}') });
    expect(out).toEqual(['resources/a.yaml:2:8: hooks module "hooks/a.ts" not found']);
  });

  it('accepts hooks that exist, built-ins, and paginators and authenticators the service declares', () => {
    const out = check({
      'service.yaml': `${SERVICE}hooks: hooks/service.ts\npaginators: [HeaderPagination]\nauth:\n  authenticators: [KeyAuth]\n`,
      'hooks/service.ts': 'export {};\n',
      'hooks/a.ts': 'export {};\n',
      ...resource('a', 'model: A', 'hooks: hooks/a.ts', 'fields: {x: {type: string}}', 'viewset:', '  overrides: {list: listA}'),
      ...resource(
        'b',
        'model: B',
        'fields: {x: {type: string}}',
        'viewset:',
        '  pagination_class: HeaderPagination',
        '  auth: [KeyAuth, JWTAuth]',
        '  m2m_auth: NOT_SET',
      ),
    });
    expect(out).toEqual([]);
  });

  it('requires a hooks module for every hook name', () => {
    const out = check({
      'service.yaml': `${SERVICE}exception_handlers: {IntegrityError: onIntegrity}\n`,
      ...resource(
        'a',
        'model: A',
        'fields: {x: {type: string}}',
        'viewset:',
        '  extra_decorators: {list: [cache, null]}',
        '  endpoints:',
        '    - {method: api_get, path: /a/stats, handler: stats}',
      ),
    });
    expect(out).toEqual([
      'resources/a.yaml:4:29: "cache" names a hook but this file has no hooks module',
      'resources/a.yaml:6:50: "stats" names a hook but this file has no hooks module',
      'service.yaml:3:38: "onIntegrity" names a hook but this file has no hooks module',
    ]);
  });
});

describe('checkModel: names and hooks as the model derives them', () => {
  it('finds a route base and operation id clash made through viewset.model_verbose_name_plural', () => {
    const alpha = resource('alpha', 'model: Alpha', 'fields:', '  name: {type: string}', 'viewset:', '  model_verbose_name_plural: items');
    const item = resource('item', 'model: Item', 'fields:', '  name: {type: string}');
    expect(check({ ...alpha, ...item })).toEqual([
      'resources/item.yaml:1:8: duplicate route base "/items": already used by Alpha in resources/alpha.yaml',
    ]);
  });

  it('finds clashing operation ids of custom endpoints, actions and CRUD operations, across files and within one', () => {
    const a = resource(
      'a',
      'model: A',
      'hooks: hooks/a.ts',
      'fields:',
      '  name: {type: string}',
      'viewset:',
      '  endpoints:',
      '    - {method: api_get, path: /a/stats/, handler: stats}',
      '  actions:',
      '    create-b: {handler: createB}',
    );
    const b = resource(
      'b',
      'model: B',
      'hooks: hooks/b.ts',
      'fields:',
      '  name: {type: string}',
      'viewset:',
      '  endpoints:',
      '    - {method: api_get, path: /b/stats/, handler: stats}',
      '  actions:',
      '    create: {handler: make}',
    );
    const hooks = { 'hooks/a.ts': 'export {};\n', 'hooks/b.ts': 'export {};\n' };
    expect(check({ ...a, ...b, ...hooks })).toEqual([
      'resources/b.yaml:7:51: duplicate operation id "stats": already used by A in resources/a.yaml',
      // The action `create` of B is `create_b`, the id of B's own create operation.
      'resources/b.yaml:9:13: duplicate operation id "create_b": already used by B in resources/b.yaml',
    ]);
  });

  it('finds a clash between a relation endpoint and another operation id only once per relation', () => {
    const tag = resource(
      'tags',
      'model: Tag',
      'fields:',
      '  name: {type: string}',
      'serializer:',
      '  ReadSerializer: {fields: [id, name]}',
    );
    const post = resource(
      'posts',
      'model: Post',
      'fields:',
      '  tags: {type: many_to_many, to: Tag}',
      'viewset:',
      '  m2m_relations:',
      '    - {model: Tag, related_name: tags, path: labels}',
      '    - {model: Tag, related_name: tags, path: labels}',
    );
    expect(check({ ...tag, ...post })).toEqual([
      'resources/posts.yaml:7:34: duplicate related_name "tags": another relation already uses it',
    ]);
  });

  it('reports relation hooks in a file without a hooks module', () => {
    const tag = resource(
      'tags',
      'model: Tag',
      'fields:',
      '  name: {type: string}',
      'serializer:',
      '  ReadSerializer: {fields: [id, name]}',
    );
    const post = resource(
      'posts',
      'model: Post',
      'fields:',
      '  tags: {type: many_to_many, to: Tag}',
      'viewset:',
      '  m2m_relations:',
      '    - {model: Tag, related_name: tags, query_handler: findTag, query_params_handler: tagFilters}',
    );
    expect(check({ ...tag, ...post })).toEqual([
      'resources/posts.yaml:6:55: "findTag" names a hook but this file has no hooks module',
      'resources/posts.yaml:6:86: "tagFilters" names a hook but this file has no hooks module',
    ]);
  });

  it('reports a custom exception class in a service file without a hooks module, at its key', () => {
    const service = { 'service.yaml': `${SERVICE}exception_handlers:\n  QuotaExceeded: onQuota\n` };
    expect(check(service)).toEqual([
      'service.yaml:4:3: "QuotaExceeded" is not a built-in exception class (built-in exception classes: ApiException, BaseException, SerializeError, AuthError, ForbiddenError, NotFoundError, MultipleObjectsError, HttpError, RequestValidationError, ValidationError, IntegrityError, ServiceUnavailableError, TooManyRequestsError); a custom one is an export of the file\'s hooks module, and this file has none',
      'service.yaml:4:18: "onQuota" names a hook but this file has no hooks module',
    ]);
  });
});
