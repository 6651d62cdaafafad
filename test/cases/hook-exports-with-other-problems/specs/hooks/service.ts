// Exports registerViews; the service file names registerView.
export function registerViews(): void {}
