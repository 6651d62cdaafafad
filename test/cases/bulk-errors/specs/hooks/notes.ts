export function importNotes(_ctx: unknown): void {}
