import { withPgClient } from './with-pg-client.ts';

/** The server's version and the settings that decide what a commit costs, as one line for the report. */
export async function readServerSettings(adminUrl: string): Promise<string> {
  return withPgClient(adminUrl, async (c) => {
    const { rows } = await c.query<{ v: string; settings: string }>(
      `select current_setting('server_version') as v,
              string_agg(name || '=' || current_setting(name), ', ' order by name) as settings
         from pg_settings where name in ('fsync', 'synchronous_commit', 'full_page_writes', 'shared_buffers')`,
    );
    return `PostgreSQL ${rows[0]?.v ?? '?'} (${rows[0]?.settings ?? '?'})`;
  });
}
