/**
 * Helpers for the blog's auth, article and M2M suites: users with real bcrypt passwords and the
 * tokens the service itself would issue, rows written straight to the database, and hand-made
 * JWTs (expired, wrong issuer, other key, `alg: none`, HS256 with the public key as secret, ...).
 * Everything runs against the real database of a running test service; nothing is mocked.
 */
import * as crypto from 'node:crypto';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { hashPassword, type Db } from '../../runtime';
import { otherKeys, testKeys } from './keys';
import type { RunningService } from './services';
import { insertReturning } from '../../runtime/db/inserts';

/** An ISO 8601 datetime in UTC as the service renders it. */
export const ISO_DATETIME = expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
/** A bcrypt hash as the service stores it. */
export const BCRYPT_HASH = /^\$2b\$\d{2}\$[./A-Za-z0-9]{53}$/;

export const UNAUTHORIZED = { detail: 'Unauthorized' };
export const NOT_FOUND = { detail: 'Not Found' };
export const METHOD_NOT_ALLOWED = { detail: 'Method Not Allowed' };
export const ARTICLE_NOT_FOUND = { article: 'not found' };
export const STAFF_REQUIRED = { error: 'forbidden', details: 'Staff privileges required' };

/** The blog's token settings (specs/service.yaml). */
export const ISSUER = 'svc-blog';
export const AUDIENCE = 'svc-blog-api';
export const ACCESS_LIFETIME = 900;
export const REFRESH_LIFETIME = 604800;

let seq = 0;
/** A name unique inside this test process. */
export function unique(prefix: string): string {
  seq += 1;
  return `${prefix}${process.pid}_${seq}`;
}

export interface BlogUser {
  id: number;
  username: string;
  email: string;
  password: string;
  first_name: string;
  last_name: string;
  is_staff: boolean;
  /** An access token as login would issue it (username, email, is_staff claims). */
  token: string;
  /** `Authorization` header value. */
  bearer: string;
}

export interface UserOptions {
  username?: string;
  password?: string;
  first_name?: string;
  last_name?: string;
  is_staff?: boolean;
  is_active?: boolean;
  is_superuser?: boolean;
}

/** A user row written directly (bcrypt-hashed password), with an access token for it. */
export async function makeUser(svc: RunningService, options: UserOptions = {}): Promise<BlogUser> {
  const username = options.username ?? unique('user');
  const email = `${username}@example.com`;
  const password = options.password ?? 'correct horse battery staple';
  const user = {
    username,
    email,
    password: await hashPassword(password),
    first_name: options.first_name ?? '',
    last_name: options.last_name ?? '',
    is_staff: options.is_staff ?? false,
    is_active: options.is_active ?? true,
    is_superuser: options.is_superuser ?? false,
    date_joined: new Date().toISOString(),
  };
  const [row] = await insertReturning(svc.database.db, svc.database.db('users').insert(user), user, ['id']);
  const id = Number(row.id);
  const is_staff = options.is_staff ?? false;
  const token = await svc.context.tokens.issueAccess(id, { username, email, is_staff });
  return {
    id,
    username,
    email,
    password,
    first_name: options.first_name ?? '',
    last_name: options.last_name ?? '',
    is_staff,
    token,
    bearer: `Bearer ${token}`,
  };
}

async function insertOne(db: Db, table: string, row: Record<string, unknown>): Promise<number> {
  const [out] = await insertReturning(db, db(table).insert(row), row, ['id']);
  return Number(out.id);
}

export function makeCategory(db: Db, name = unique('category'), description = ''): Promise<number> {
  return insertOne(db, 'categories', { name, description });
}

export function makeTag(db: Db, name = unique('tag')): Promise<number> {
  return insertOne(db, 'tags', { name });
}

/** An article written directly: published unless told otherwise. */
export function makeArticle(db: Db, values: Record<string, unknown> & { author_id: number }): Promise<number> {
  return insertOne(db, 'articles', {
    title: unique('Article '),
    content: 'Content',
    summary: '',
    is_published: true,
    views: 0,
    created_at: '2026-01-01T00:00:00.000Z',
    ...values,
  });
}

/** Relates tags to an article directly in the join table. */
export async function relateTags(db: Db, articleId: number, tagIds: number[]): Promise<void> {
  for (const tagId of tagIds) await db('articles_tags').insert({ article_id: articleId, tag_id: tagId });
}

/** The tag ids related to an article, sorted (as the join table holds them, duplicates included). */
export async function articleTagIds(db: Db, articleId: number): Promise<number[]> {
  const rows: { tag_id: unknown }[] = await db('articles_tags').select('tag_id').where('article_id', articleId);
  return rows.map((r) => Number(r.tag_id)).sort((a, b) => a - b);
}

/** The label ids related to a showcase widget, sorted (duplicates included). */
export async function widgetLabelIds(db: Db, widgetId: number): Promise<string[]> {
  const rows: { label_id: string }[] = await db('widgets_labels').select('label_id').where('widget_id', widgetId);
  return rows.map((r) => String(r.label_id)).sort();
}

/** Decodes a JWT without verifying it: header and payload. */
export function decodeToken(token: string): { header: Record<string, unknown>; payload: Record<string, unknown> } {
  return { header: decodeProtectedHeader(token) as Record<string, unknown>, payload: decodeJwt(token) };
}

export const nowSeconds = () => Math.floor(Date.now() / 1000);

/** The claims of a valid access token for `sub`, overridable (set a claim to undefined to drop it). */
export function accessClaims(sub: number | string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const iat = nowSeconds();
  const claims: Record<string, unknown> = { sub: String(sub), iss: ISSUER, aud: AUDIENCE, iat, exp: iat + ACCESS_LIFETIME, ...overrides };
  for (const key of Object.keys(claims)) if (claims[key] === undefined) delete claims[key];
  return claims;
}

/** Signs `claims` but `iat`, RS256, with the service's private key (or another one). */
export function signRs256(claims: Record<string, unknown>, privateKey: string = testKeys().privateKey): string {
  const { iat: _iat, ...rest } = claims;
  return signRs256Raw(rest, privateKey);
}

const b64url = (data: string | Buffer) => Buffer.from(data).toString('base64url');

/**
 * Signs `claims` byte for byte, RS256, with the service's private key: unlike `signRs256` (which
 * drops an `iat`), every claim is kept, whatever its type (`iat: "yesterday"`, `exp: null`).
 */
export function signRs256Raw(claims: Record<string, unknown>, privateKey: string = testKeys().privateKey): string {
  const input = `${b64url(JSON.stringify({ alg: 'RS256', typ: 'JWT' }))}.${b64url(JSON.stringify(claims))}`;
  return `${input}.${crypto.sign('sha256', Buffer.from(input), privateKey).toString('base64url')}`;
}

/** An unsigned token: header `{"alg": "none"}`, empty signature. */
export function unsignedToken(claims: Record<string, unknown>): string {
  return `${b64url(JSON.stringify({ alg: 'none', typ: 'JWT' }))}.${b64url(JSON.stringify(claims))}.`;
}

/** The algorithm-confusion attack: HS256 with the service's PUBLIC key PEM as the HMAC secret. */
export function hs256WithPublicKey(claims: Record<string, unknown>): string {
  const input = `${b64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }))}.${b64url(JSON.stringify(claims))}`;
  const signature = crypto.createHmac('sha256', testKeys().publicKey).update(input).digest('base64url');
  return `${input}.${signature}`;
}

/** Signed with a key pair the service does not trust. */
export function otherKeyToken(claims: Record<string, unknown>): string {
  return signRs256(claims, otherKeys().privateKey);
}

/** Sorts the `details` of an M2M response (when both lists run concurrently their order is not fixed). */
export function sortDetails<T>(body: T): T {
  const b = body as { results?: { details?: string[] }; errors?: { details?: string[] } };
  return {
    ...b,
    results: b.results && { ...b.results, details: [...(b.results.details ?? [])].sort() },
    errors: b.errors && { ...b.errors, details: [...(b.errors.details ?? [])].sort() },
  } as T;
}

/** An M2M response body with the given detail messages. */
export function m2m(results: string[], errors: string[] = []) {
  return { results: { count: results.length, details: results }, errors: { count: errors.length, details: errors } };
}
