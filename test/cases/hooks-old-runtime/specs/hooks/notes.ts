// The right package, but a name it no longer exports, and one it never did.
import { type HookContext, validate, z, sendJsonn } from '@svcgen/runtime';

const Text = z.object({ text: z.string().min(3) });

export function checkText({ req }: HookContext): void {
  validate(Text, req.body);
  void sendJsonn;
}
