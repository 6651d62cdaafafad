export function importNotes(): void {}
