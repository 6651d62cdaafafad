import type { ComputeArgs } from '@svcgen/runtime';

export function bookTitle({ instance }: ComputeArgs<{ title: string }>): string {
  return instance.title;
}
export function bookSlug(): string {
  return '';
}
export function isLong({ instance }: ComputeArgs<{ pages: number }>): boolean {
  return instance.pages > 300;
}
