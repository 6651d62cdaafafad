/**
 * The built-in account endpoints of the service file (`endpoints: - account: login`): what each
 * needs of the user model (`auth.user_model`), and each written out as the custom endpoint it stands
 * for, so that names, routes, schemas, the OpenAPI document and the typed client treat it as any
 * other endpoint. The handlers are the runtime's (`accountHandlers`, runtime/operations/accounts.ts).
 */
import { TOO_MANY_LOGIN_FAILURES_MESSAGE } from '@svcgen/runtime/catalogue';
import type { AccountEndpointSpec, AccountKind, ManualFieldSpec, ManualSchemaSpec, ServiceEndpointSpec } from './meta-schema';

/** What each built-in answers, before what the entry writes. */
interface AccountDefaults {
  method: ServiceEndpointSpec['method'];
  /** The path under the base path, when it is not `/auth/<kind>/`. */
  path?: string;
  handler: string;
  auth: null | string[];
  status: number;
  summary: string;
  errors?: Record<string, Record<string, string>>;
}

export const ACCOUNT_DEFAULTS: Record<AccountKind, AccountDefaults> = {
  register: { method: 'api_post', handler: 'register', auth: null, status: 201, summary: 'Register a new user and return tokens.' },
  login: {
    method: 'api_post',
    handler: 'login',
    auth: null,
    status: 200,
    summary: 'Exchange a username and password for tokens.',
    errors: { 429: { detail: TOO_MANY_LOGIN_FAILURES_MESSAGE } },
  },
  refresh: {
    method: 'api_post',
    handler: 'refresh',
    auth: null,
    status: 200,
    summary: 'Exchange a refresh token for a new access and refresh token.',
  },
  logout: {
    method: 'api_post',
    handler: 'logout',
    auth: null,
    status: 204,
    summary: 'Spend a refresh token so that it can no longer be exchanged.',
  },
  logout_all: {
    method: 'api_post',
    path: '/auth/logout-all/',
    handler: 'logout_all',
    auth: ['JWTAuth'],
    status: 204,
    summary: 'End every session of the caller: their refresh and access tokens issued until now.',
  },
  me: { method: 'api_get', handler: 'me', auth: ['JWTAuth'], status: 200, summary: 'The authenticated user.' },
  password: {
    method: 'api_post',
    handler: 'change_password',
    auth: ['JWTAuth'],
    status: 204,
    summary: "Change the caller's password.",
    errors: { 400: { current_password: 'Incorrect password' }, 429: { detail: TOO_MANY_LOGIN_FAILURES_MESSAGE } },
  },
};

/** The fields of the user model every account endpoint reads, with the types they may have. */
export const ACCOUNT_USER_FIELDS: Record<string, readonly string[]> = {
  username: ['string'],
  email: ['email', 'string'],
  password: ['password'],
  is_active: ['boolean'],
};

/** A model field's type as a manual schema writes it; undefined for relations. */
const VALUE_TYPE_OF: Record<string, NonNullable<Exclude<ManualFieldSpec, string>['type']>> = {
  string: 'str',
  text: 'str',
  password: 'str',
  email: 'email',
  url: 'url',
  integer: 'int',
  big_integer: 'int',
  float: 'float',
  decimal: 'decimal',
  boolean: 'bool',
  date: 'date',
  datetime: 'datetime',
  uuid: 'uuid',
  json: 'dict',
};

export function valueTypeOf(fieldType: string | undefined): string | undefined {
  return fieldType === undefined ? undefined : VALUE_TYPE_OF[fieldType];
}

/** A user model field as the account endpoints see it: its spec's type, max_length, default and null. */
export interface UserFieldInfo {
  type?: string;
  max_length?: number;
  default?: unknown;
  null?: boolean;
}

/** bcrypt reads at most 72 bytes: no longer password is accepted (the policy counts bytes). */
const PASSWORD_FIELD = { type: 'str', max_length: 72 } as const;
const TOKEN_RESPONSE: ManualSchemaSpec = {
  name: 'TokenResponse',
  fields: { access_token: 'str', refresh_token: 'str', token_type: 'str', expires_in: 'int' },
};
/** The answer of register, login and refresh with `auth.cookies: only`: the tokens are in the cookies alone. */
const COOKIE_TOKEN_RESPONSE: ManualSchemaSpec = {
  name: 'CookieTokenResponse',
  fields: { token_type: 'str', expires_in: 'int' },
};

/** How the account endpoints keep the tokens: in the bodies only, also in cookies, or in cookies only. */
export type AccountCookies = boolean | 'only';

/** The request and response schemas of one built-in. */
function schemasOf(
  kind: AccountKind,
  user: (name: string) => UserFieldInfo,
  pkType: string,
  profile: readonly string[],
  cookies: AccountCookies,
): { request?: ManualSchemaSpec; response: ManualSchemaSpec | null } {
  const tokens = cookies === 'only' ? COOKIE_TOKEN_RESPONSE : TOKEN_RESPONSE;
  // With cookies, the refresh token may come in its cookie instead (the runtime answers the 422 of a missing field when neither does).
  const refreshToken: ManualFieldSpec = cookies !== false ? { type: 'str', required: false } : 'str';
  const profileIn = Object.fromEntries(
    profile.map((name) => {
      const f = user(name);
      const spec: Exclude<ManualFieldSpec, string> = { type: VALUE_TYPE_OF[f.type ?? 'string'] ?? 'str' };
      if (f.max_length !== undefined) spec.max_length = f.max_length;
      if (f.default !== undefined) spec.default = f.default;
      else if (f.null === true) spec.required = false;
      if (f.null === true) spec.nullable = true;
      return [name, spec];
    }),
  );
  const profileOut = Object.fromEntries(
    profile.map((name) => {
      const f = user(name);
      const type = VALUE_TYPE_OF[f.type ?? 'string'] ?? 'str';
      return [name, f.null === true ? { type, nullable: true } : type];
    }),
  );
  const username = user('username');
  const email = user('email');
  switch (kind) {
    case 'register':
      return {
        request: {
          name: 'RegisterSchema',
          fields: {
            username: { type: 'str', max_length: username.max_length ?? 150 },
            email: { type: 'email', max_length: email.max_length ?? 254 },
            password: PASSWORD_FIELD,
            ...profileIn,
          },
        },
        response: tokens,
      };
    case 'login':
      return { request: { name: 'LoginSchema', fields: { username: 'str', password: PASSWORD_FIELD } }, response: tokens };
    case 'refresh':
      return { request: { name: 'RefreshSchema', fields: { refresh_token: refreshToken } }, response: tokens };
    case 'logout':
      return { request: { name: 'LogoutSchema', fields: { refresh_token: refreshToken } }, response: null };
    case 'logout_all':
      return { response: null };
    case 'me':
      return {
        response: {
          name: 'UserResponse',
          fields: { id: (VALUE_TYPE_OF[pkType] ?? 'int') as 'int', username: 'str', email: 'str', ...profileOut },
        },
      };
    case 'password':
      return {
        request: { name: 'PasswordChangeSchema', fields: { current_password: PASSWORD_FIELD, new_password: PASSWORD_FIELD } },
        response: null,
      };
  }
}

/** An `account:` entry written out as the custom endpoint it stands for. */
export function expandAccountEndpoint(
  entry: AccountEndpointSpec,
  user: (name: string) => UserFieldInfo,
  pkType: string,
  profile: readonly string[],
  cookies: AccountCookies = false,
): ServiceEndpointSpec {
  const kind = entry.account;
  const d = ACCOUNT_DEFAULTS[kind];
  const { request, response } = schemasOf(kind, user, pkType, profile, cookies);
  const out: ServiceEndpointSpec = {
    account: kind,
    method: d.method,
    path: entry.path ?? d.path ?? `/auth/${kind}/`,
    handler: entry.handler ?? d.handler,
    auth: entry.auth === undefined ? d.auth : entry.auth,
    status: d.status,
    tags: entry.tags ?? ['auth'],
    summary: entry.summary ?? d.summary,
    response,
  } as ServiceEndpointSpec;
  if (entry.description !== undefined) out.description = entry.description;
  if (request) out.request = request as ServiceEndpointSpec['request'];
  if (d.errors) out.errors = d.errors as ServiceEndpointSpec['errors'];
  return out;
}
