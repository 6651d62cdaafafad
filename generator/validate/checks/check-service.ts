/**
 * The service file: `auth.user_model` names a known resource, and each of `auth.extra_claims` is
 * one of its fields. Account endpoints (`- account: login`) need a user model with the fields they
 * read, and `auth.profile_fields` name plain fields of it; when all of that holds, each account
 * entry is written out as the custom endpoint it stands for (validate/accounts.ts), in place.
 */
import type { SpecFile } from '../../load/load';
import { ACCOUNT_USER_FIELDS, expandAccountEndpoint, valueTypeOf, type UserFieldInfo } from '../accounts';
import type { AccountEndpointSpec } from '../meta-schema';
import { didYouMean } from '../suggest';
import { asRec, asStr, type Ctx, eachItem, isRec, listWords, type Rec, report } from './context';
import { fieldOf, type Resource } from './resources';

export function checkService(ctx: Ctx, spec: SpecFile, data: Rec): void {
  const auth = asRec(data.auth);
  const userModel = asStr(auth?.user_model);
  const user = userModel === undefined ? undefined : ctx.byModel.get(userModel);
  if (userModel !== undefined && !user) {
    const hint = didYouMean(userModel, ctx.byModel.keys());
    report(ctx, spec, ['auth', 'user_model'], `auth.user_model names unknown resource "${userModel}"${hint}`);
  }
  if (user) {
    eachItem(auth?.extra_claims, ['auth', 'extra_claims'], (claim, at) => {
      if (typeof claim === 'string') fieldOf(ctx, spec, user, claim, 'extra claim', at);
    });
  }
  checkAccounts(ctx, spec, data, userModel, user);
}

const isAccount = (item: unknown): item is AccountEndpointSpec => isRec(item) && typeof item.account === 'string';

function checkAccounts(ctx: Ctx, spec: SpecFile, data: Rec, userModel: string | undefined, user: Resource | undefined): void {
  const auth = asRec(data.auth);
  const accounts: number[] = [];
  eachItem(data.endpoints, ['endpoints'], (item, at, i) => {
    if (!isAccount(item)) return;
    accounts.push(i);
    if (userModel === undefined)
      report(ctx, spec, [...at, 'account'], `account endpoints need auth.user_model: the resource whose rows are the accounts`);
  });
  const profile: string[] = [];
  eachItem(auth?.profile_fields, ['auth', 'profile_fields'], (name, at) => {
    if (typeof name !== 'string' || !user) return;
    const field = fieldOf(ctx, spec, user, name, 'profile field', at);
    if (!field) return;
    if (name in ACCOUNT_USER_FIELDS || field === user.pk) {
      report(ctx, spec, at, `profile field "${name}" is one the account endpoints handle themselves; list other fields of ${user.name}`);
    } else if (valueTypeOf(field.type) === undefined) {
      report(ctx, spec, at, `profile field "${name}" is a relation; a profile field holds a value`);
    } else profile.push(name);
  });
  if (!accounts.length) return;
  if (user && !user.opaque) {
    const missing = Object.entries(ACCOUNT_USER_FIELDS).filter(([name, types]) => !types.includes(user.fields.get(name)?.type ?? ''));
    if (missing.length) {
      const wanted = missing.map(([name, types]) => `${name} (${types.join(' or ')})`);
      report(
        ctx,
        spec,
        ['endpoints', accounts[0], 'account'],
        `account endpoints need the fields ${listWords(wanted, 'and')} of the user model ${user.name}`,
      );
    }
  }
  // Written out even when something above was reported, so that the checks of names across files
  // see the endpoints' operation ids and paths; the build stops on the problems reported.
  const fieldInfo = (name: string): UserFieldInfo => {
    const field = user?.fields.get(name);
    const s = field?.spec ?? {};
    return {
      type: field?.type,
      max_length: typeof s.max_length === 'number' ? s.max_length : undefined,
      default: s.default,
      null: s.null === true,
    };
  };
  const list = data.endpoints as unknown[];
  const cookies = auth?.cookies === 'only' ? 'only' : auth?.cookies === true;
  for (const i of accounts)
    list[i] = expandAccountEndpoint(list[i] as AccountEndpointSpec, fieldInfo, user?.pk.type ?? 'integer', profile, cookies);
}
