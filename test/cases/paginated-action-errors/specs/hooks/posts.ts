export function recentPosts(): void {}
export function pinnedPost(): void {}
export function purgePosts(): void {}
export function editPosts(): void {}
export function summaryPosts(): void {}
export function postFeed(): void {}
