export function overview(_ctx: unknown): void {}
