/** `adminUrl` with its database replaced by `name`; user, host, port and query parameters are kept. */
export function databaseUrl(adminUrl: string, name: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${encodeURIComponent(name)}`;
  return url.toString();
}
