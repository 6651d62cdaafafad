export function restoreTrunk(): void {}
export function shred(): void {}
