/**
 * The nested-write helpers without a database: `writeChildren`'s order of writes and its refusals
 * before any write, and `checkCaller`'s 401 and 403 for a child operation's authentication and roles.
 */
import { AuthError, ForbiddenError, RequestValidationError } from '../../runtime/core/errors';
import type { RequestContext } from '../../runtime/operations/context';
import { checkCaller, writeChildren, type ChildWrites } from '../../runtime/operations/nested';

interface Item {
  id?: number;
  text: string;
}

/** A context whose database is never reached (the writes below record instead). */
function contextOf(user?: RequestContext['user']): RequestContext {
  return { req: { res: { setHeader() {} } }, user, db: undefined, service: undefined } as unknown as RequestContext;
}

/** Writes recording what they were asked, over the children `existing` of parent 7. */
function recorder(existing: number[]) {
  const log: string[] = [];
  let next = 100;
  const writes: Required<ChildWrites<Item, string>> = {
    async create(item, parent) {
      log.push(`create ${item.text} of ${parent}`);
      return `new ${next++}`;
    },
    async update(pk, item) {
      log.push(`update ${pk} to ${item.text}`);
      return `updated ${pk}`;
    },
    async remove(pk) {
      log.push(`remove ${pk}`);
    },
    async children() {
      return existing;
    },
  };
  return { log, writes };
}

const spec = (mode: 'create' | 'replace' | 'merge', writes: ChildWrites<Item, string>) => ({
  at: ['body', 'data', 'notes'],
  mode,
  key: 'id',
  names: { child: 'note', parent: 'order' },
  writes,
});

describe('writeChildren', () => {
  it('creates every item of a create, in order', async () => {
    const { log, writes } = recorder([]);
    expect(await writeChildren(contextOf(), 7, [{ text: 'a' }, { text: 'b' }], spec('create', writes))).toEqual(['new 100', 'new 101']);
    expect(log).toEqual(['create a of 7', 'create b of 7']);
  });

  it('replaces: deletes the children not named first, then updates and creates in the items order', async () => {
    const { log, writes } = recorder([1, 2, 3]);
    const answer = await writeChildren(contextOf(), 7, [{ id: 3, text: 'c' }, { text: 'd' }], spec('replace', writes));
    expect(answer).toEqual(['updated 3', 'new 100']);
    expect(log).toEqual(['remove 1', 'remove 2', 'update 3 to c', 'create d of 7']);
  });

  it('merges: keeps the children not named', async () => {
    const { log, writes } = recorder([1, 2]);
    await writeChildren(contextOf(), 7, [{ id: 2, text: 'b' }], spec('merge', writes));
    expect(log).toEqual(['update 2 to b']);
  });

  it('refuses keys that are not children, or named twice, before writing anything', async () => {
    const { log, writes } = recorder([1, 2]);
    const items = [{ text: 'x' }, { id: 9, text: 'y' }, { id: 1, text: 'z' }, { id: 1, text: 'w' }];
    const failure = await writeChildren(contextOf(), 7, items, spec('replace', writes)).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(RequestValidationError);
    expect((failure as RequestValidationError).entries).toEqual([
      { type: 'not_a_child', loc: ['body', 'data', 'notes', 1, 'id'], msg: 'No note of this order has this key' },
      { type: 'duplicate_key', loc: ['body', 'data', 'notes', 3, 'id'], msg: 'The note with this key is listed twice' },
    ]);
    expect(log).toEqual([]);
  });
});

describe('checkCaller', () => {
  it('lets anyone run a public operation without roles', () => {
    expect(() => checkCaller(contextOf(), { authenticated: false })).not.toThrow();
  });

  it('needs a caller for an authenticated operation or one with roles (401)', () => {
    expect(() => checkCaller(contextOf(), { authenticated: true })).toThrow(AuthError);
    expect(() => checkCaller(contextOf(), { authenticated: false, roles: ['staff'] })).toThrow(AuthError);
  });

  it('needs one of the roles (403 naming them)', () => {
    const clerk = contextOf({ id: 1, is_active: true, is_staff: false, is_superuser: false, roles: ['clerk'] });
    expect(() => checkCaller(clerk, { authenticated: true, roles: ['staff'] })).toThrow(
      new ForbiddenError('forbidden', 'Role staff is required'),
    );
    expect(() =>
      checkCaller(contextOf({ id: 2, is_active: true, is_staff: true, is_superuser: false }), { authenticated: true, roles: ['staff'] }),
    ).not.toThrow();
  });
});
