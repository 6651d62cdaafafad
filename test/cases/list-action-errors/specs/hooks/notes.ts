export function archiveNote(): void {}
