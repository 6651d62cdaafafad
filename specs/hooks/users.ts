// The users resource: staff creating a user go through the same credentials policy as registration.
// User-owned: `svcgen build` never touches this file; specs/resources/users.yaml names these hooks.
import { credentialProblems, normalizeUsername, RequestValidationError, type HookContext } from '@svcgen/runtime';
import type { UserIn } from '../../generated/resources/users/schemas';

/** POST /users/ (AdminAuth): the username in its NFKC form (what is stored), the credentials policy, then the generated create. */
export async function createUser({ data, proceed }: HookContext<{ data: UserIn; proceed: () => Promise<unknown> }>): Promise<unknown> {
  data.username = normalizeUsername(data.username);
  const problems = credentialProblems(data.username, data.password);
  if (problems.length > 0) throw new RequestValidationError(problems);
  return proceed();
}
