export function overview(): void {}
