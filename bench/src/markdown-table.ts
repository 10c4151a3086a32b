/** A GitHub-flavoured markdown table; columns after the first are right-aligned (they hold numbers). */
export function markdownTable(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const align = headers.map((_, i) => (i === 0 ? '---' : '---:'));
  return [headers, align, ...rows].map((cells) => `| ${cells.join(' | ')} |`).join('\n');
}

/** `n` with `digits` decimals, or an en dash when it is not a finite number. */
export function fixed(n: number | null | undefined, digits: number): string {
  return n === null || n === undefined || !Number.isFinite(n) ? '–' : n.toFixed(digits);
}
