import { createServer } from 'node:net';
import { portUnavailable } from './port-unavailable.ts';

/**
 * Resolves when host:port can be bound; rejects with a message naming the setting (CONTROL_PORT), or
 * `hostSetting` (CONTROL_HOST) when the host does not resolve or is not this machine's. Port 0 (any free
 * port) is probed too: its host may still not be one of this machine's.
 */
export async function checkPortFree(
  host: string,
  port: number,
  setting = 'CONTROL_PORT',
  hostSetting = setting === 'CONTROL_PORT' ? 'CONTROL_HOST' : setting,
): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const probe = createServer();
    probe.once('error', (err: NodeJS.ErrnoException) => reject(portUnavailable(setting, host, port, err, hostSetting)));
    probe.listen(port, host, () => probe.close(() => resolve()));
  });
}
