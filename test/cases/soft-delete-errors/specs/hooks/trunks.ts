export function restoreTrunk(_ctx: unknown): void {}
export function shred(_ctx: unknown): void {}
