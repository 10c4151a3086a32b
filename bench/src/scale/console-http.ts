/** A signed-in console session against a running control plane, over plain HTTP as the console's server calls it. */
export interface ConsoleHttp {
  /** One tRPC query (GET, input as JSON in the URL); its data, or a thrown error with the answer's status. */
  query(path: string, input: unknown): Promise<unknown>;
}

/** Signs in as `name` and returns a session that sends its cookie with every query. */
export async function signInConsole(baseUrl: string, name: string, password: string): Promise<ConsoleHttp> {
  const res = await fetch(`${baseUrl}/trpc/auth.signIn`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name, password }),
  });
  const cookie = res.headers.get('set-cookie')?.split(';')[0];
  if (res.status !== 200 || !cookie) throw new Error(`sign-in as ${name} failed: ${res.status} ${await res.text()}`);
  return {
    async query(path, input) {
      const answer = await fetch(`${baseUrl}/trpc/${path}?input=${encodeURIComponent(JSON.stringify(input))}`, {
        headers: { cookie },
      });
      const body = (await answer.json()) as { result?: { data?: unknown } };
      if (answer.status !== 200)
        throw new Error(`${path}: HTTP ${answer.status} ${JSON.stringify(body).slice(0, 300)}`);
      return body.result?.data;
    },
  };
}
