/**
 * The nearest known word to a mistyped one, for "did you mean" hints. Edit distance (insertions, deletions,
 * substitutions and swaps of neighbours) bounded to about a third of the word, so a hint is offered only when
 * the typo is plausibly that word.
 */

function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) =>
    Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  const at = (i: number, j: number): number => d[i]?.[j] ?? Number.POSITIVE_INFINITY;
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, at(i - 2, j - 2) + 1);
      const row = d[i];
      if (row) row[j] = best;
    }
  }
  return at(a.length, b.length);
}

/** The closest of `known` to `word` (case-insensitive), or undefined when none is close enough. */
export function closest(word: string, known: readonly string[]): string | undefined {
  const w = word.toLowerCase();
  const limit = Math.max(1, Math.floor(w.length / 3));
  let best: { word: string; distance: number } | undefined;
  for (const k of known) {
    const distance = editDistance(w, k.toLowerCase());
    if (distance <= limit && (best === undefined || distance < best.distance)) best = { word: k, distance };
  }
  return best?.word;
}

/** `; did you mean "x"?` or the empty string. */
export function didYouMean(word: string, known: readonly string[], show: (w: string) => string = (w) => w): string {
  const hit = closest(word, known);
  return hit === undefined ? '' : `; did you mean ${show(hit)}?`;
}
