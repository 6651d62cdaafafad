export function taskOverview(): void {}
export function taskStats(): void {}
export function archiveTask(): void {}
export function postStats(): void {}
export function postArchive(): void {}
