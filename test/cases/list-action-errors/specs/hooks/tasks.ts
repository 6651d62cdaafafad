export function taskOverview(_ctx: unknown): void {}
export function taskStats(_ctx: unknown): void {}
export function archiveTask(_ctx: unknown): void {}
export function postStats(_ctx: unknown): void {}
export function postArchive(_ctx: unknown): void {}
