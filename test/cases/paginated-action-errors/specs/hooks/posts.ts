export function recentPosts(_ctx: unknown): void {}
export function pinnedPost(_ctx: unknown): void {}
export function purgePosts(_ctx: unknown): void {}
export function editPosts(_ctx: unknown): void {}
export function summaryPosts(_ctx: unknown): void {}
export function postFeed(_ctx: unknown): void {}
