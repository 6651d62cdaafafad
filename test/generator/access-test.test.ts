/**
 * The generated access test hands the runtime access.json and, beside it, only what that file does
 * not say (the `hooks` cells a custom authenticator decides): the runtime's checks must be the
 * generator's `accessCheck`, cell for cell, for every kind of authenticator list and every cell.
 */
import { accessJson } from '../../generator/access/gate';
import { accessCheck, type Access, type AccessMatrix, type Caller } from '../../generator/access/matrix';
import { authenticatorDecides } from '../../generator/render/access-test';
import type { AuthSpec } from '../../generator/model/model';
import { accessCaller, accessOperations } from '../../runtime/http/access-test';

const CALLERS: Caller[] = ['anonymous', 'authenticated', 'role:manager', 'staff', 'superuser'].map((name) => {
  const { user, staff, superuser, roles } = accessCaller(name);
  return { name, user, staff, superuser, roles: [...roles] };
});

const AUTHS: AuthSpec[] = [
  null,
  ['JWTAuth'],
  ['AdminAuth'],
  ['SuperuserAuth'],
  ['ApiKeyAuth'],
  ['AdminAuth', 'ApiKeyAuth'],
  ['ApiKeyAuth', 'JWTAuth'],
];
const CELLS: Access[] = ['401', '403', 'hooks', '2xx'];

function matrixOf(): AccessMatrix {
  const rows = AUTHS.flatMap((auth, i) =>
    CELLS.map((cell, j) => ({
      operationId: `op_${i}_${j}`,
      route: `GET /api/things/${i}/${j}/`,
      access: Object.fromEntries(CALLERS.map((c) => [c.name, cell])),
      rules: {},
      hooks: [],
      auth,
      sources: [],
    })),
  );
  return { callers: CALLERS, rows };
}

describe('the access test reads access.json', () => {
  it('checks every cell as the generator decides it', () => {
    const matrix = matrixOf();
    const access = JSON.parse(accessJson(matrix, []));
    const operations = accessOperations({ access, authenticatorDecides: authenticatorDecides(matrix) });
    expect(operations).toEqual(
      matrix.rows.map((row) => ({
        operationId: row.operationId,
        method: 'GET',
        path: row.route.split(' ')[1],
        checks: Object.fromEntries(CALLERS.map((c) => [c.name, accessCheck(row, c)])),
      })),
    );
    // A custom authenticator alone decides a user's `hooks` cell; beside AdminAuth, only for those it refuses; beside JWTAuth, none.
    const decides = authenticatorDecides(matrix);
    expect(decides.op_4_2).toEqual(['authenticated', 'role:manager', 'staff', 'superuser']);
    expect(decides.op_5_2).toEqual(['authenticated', 'role:manager']);
    expect(decides.op_6_2).toBeUndefined();
    expect(decides.op_1_2).toBeUndefined();
  });

  it('refuses a caller or a cell it does not know', () => {
    expect(() => accessCaller('robot')).toThrow('access.json names a caller the access test does not know: robot');
    const access = { callers: ['anonymous'], operations: { op: { route: 'GET /x/', access: { anonymous: 'open' } } } };
    expect(() => accessOperations({ access })).toThrow('access.json holds a cell the access test does not know: open for anonymous');
  });
});
