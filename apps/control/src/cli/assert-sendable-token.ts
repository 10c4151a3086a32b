import { createTokenHint } from '../auth/tokens/resolve-bearer-token.ts';
import { CliError } from './cli-error.ts';
import { exitCodes } from './exit-codes.ts';

/**
 * Refuses (exit 3, like a token the control plane refuses) an API token that holds a character no
 * HTTP header can carry, before anything is sent: `fetch` would throw, which read as "cannot reach the
 * control plane" (review 31). Tokens are visible ASCII (`sgf_` and base64url), so anything else is a
 * pasted hint (`sgf_AbCd1234…`, what `token list` shows), a token broken across lines, or not a token.
 *
 * @example
 * assertSendableToken('sgf_AbCd1234…'); // throws CliError(3, 'SAGAFLOW_TOKEN is not usable: …')
 */
export function assertSendableToken(token: string): void {
  const at = token.search(/[^\x21-\x7e]/);
  if (at < 0) return;
  const char = String.fromCodePoint(token.codePointAt(at) ?? 0);
  const unit = (char.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0');
  throw new CliError(
    exitCodes.unauthorised,
    `SAGAFLOW_TOKEN is not usable: it holds ${JSON.stringify(char)} (U+${unit}) at character ${at + 1}, which no ` +
      'HTTP header can carry, so nothing was sent. `token list` shows only the first characters of a token; set ' +
      'SAGAFLOW_TOKEN to the whole token, on one line, as it was printed once when it was created, ' +
      `or ${createTokenHint}`,
  );
}
