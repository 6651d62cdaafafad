/**
 * The service file: `auth.user_model` names a known resource, and each of `auth.extra_claims` is
 * one of its fields.
 */
import type { SpecFile } from '../../load/load';
import { didYouMean } from '../suggest';
import { asRec, asStr, type Ctx, eachItem, type Rec, report } from './context';
import { fieldOf } from './resources';

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
}
