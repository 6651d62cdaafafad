export function archiveNote(_ctx: unknown): void {}
