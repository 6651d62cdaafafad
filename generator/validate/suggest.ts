/**
 * Suggestions for misspelt names: the field names, resources, hooks and built-ins a spec could have meant.
 */

/** ` (did you mean "x"?)` when one candidate is a small edit away from `name`. */
export function didYouMean(name: string, candidates: Iterable<string>): string {
  if (name.length < 3) return '';
  let best: string | undefined;
  let bestDistance = (name.length <= 4 ? 1 : Math.max(2, Math.floor(name.length / 3))) + 1;
  for (const c of candidates) {
    const d = editDistance(name.toLowerCase(), c.toLowerCase());
    if (d < bestDistance) [best, bestDistance] = [c, d];
  }
  return best === undefined ? '' : ` (did you mean "${best}"?)`;
}

function editDistance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) {
      next[j] = Math.min(row[j] + 1, next[j - 1] + 1, row[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    row = next;
  }
  return row[b.length];
}
