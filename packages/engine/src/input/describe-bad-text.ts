/**
 * Why PostgreSQL cannot store this string as it is, or null if it can. A NUL (U+0000) is refused by
 * `text` and `jsonb` alike; a lone UTF-16 surrogate is refused by `jsonb` and silently turned into
 * U+FFFD by `text` (two different ids would become one). Both are refused, never converted.
 */
export function describeBadText(text: string): string | null {
  const nul = text.indexOf('\u0000');
  if (nul !== -1) return `contains a NUL character (\\u0000) at index ${nul}, which the database cannot store`;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0xd800 || unit > 0xdfff) continue;
    const next = i + 1 < text.length ? text.charCodeAt(i + 1) : 0;
    if (unit <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
      i++;
      continue;
    }
    return `lone UTF-16 surrogate \\u${unit.toString(16)} at index ${i}, which is not text the database can store`;
  }
  return null;
}

/** A short, storable rendering of a string for an error message (escapes NUL and lone surrogates). */
export function quoteForMessage(text: string, max = 60): string {
  const cut = text.length > max ? `${text.slice(0, max)}…` : text;
  // JSON.stringify escapes NUL and lone surrogates, so the message itself is always storable.
  return JSON.stringify(cut);
}
