/**
 * Our own diagnostic text (an error's message, name or stack kept in a failure record) made
 * storable: each NUL and each lone UTF-16 surrogate becomes U+FFFD, the same length, so a cut made
 * before stays within its column. Caller input is refused instead (ADR 0013); a diagnostic is not
 * input, and refusing it would lose the failure it describes.
 */
export function toStorableDiagnostic(text: string): string {
  // eslint-disable-next-line no-control-regex -- NUL is exactly what PostgreSQL refuses
  return text.replace(/\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd');
}
