import { createServer } from 'node:net';

/** Resolves when host:port can be bound; rejects with a message naming the setting (CONTROL_PORT) otherwise. */
export async function checkPortFree(host: string, port: number, setting = 'CONTROL_PORT'): Promise<void> {
  if (port === 0) return;
  await new Promise<void>((resolve, reject) => {
    const probe = createServer();
    probe.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        new Error(
          `${setting} ${port} on ${host} is not available (${err.code ?? err.message}); stop what is using it or set ${setting} to a free port`,
        ),
      ),
    );
    probe.listen(port, host, () => probe.close(() => resolve()));
  });
}
