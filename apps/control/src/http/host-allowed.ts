/**
 * Whether a request's Host header names this server. A page on another site that resolves its own
 * name to our address (DNS rebinding) sends its own name as Host; refusing names we do not know is
 * what keeps such a page from driving the API. Names are compared without port or case.
 */
export function hostAllowed(hostHeader: string | undefined, allowedNames: ReadonlySet<string>): boolean {
  if (hostHeader === undefined || hostHeader.length === 0) return false;
  let hostname: string;
  try {
    hostname = new URL(`http://${hostHeader}`).hostname;
  } catch {
    return false;
  }
  return allowedNames.has(hostname.toLowerCase());
}

/** The names a Host setting lists, normalised as `hostAllowed` compares them ("[::1]" for IPv6). */
export function hostNames(names: readonly string[]): ReadonlySet<string> {
  const out = new Set<string>();
  for (const name of names) {
    try {
      out.add(new URL(`http://${name.includes(':') && !name.startsWith('[') ? `[${name}]` : name}`).hostname);
    } catch {
      throw new Error(`invalid setting SAGAFLOW_ALLOWED_HOSTS: "${name}" is not a host name`);
    }
  }
  return out;
}
