/** A listener address parsed from SAGAFLOW_METRICS_ADDRESS: `host:port`, or `[v6]:port`. */
export interface ListenAddress {
  host: string;
  port: number;
}

const pattern = /^(?:\[([0-9a-fA-F:.]+)\]|([^\s:[\]]+)):(\d{1,5})$/;

/** Parses `host:port`; undefined when the text is not one (the env schema reports it). */
export function parseListenAddress(text: string): ListenAddress | undefined {
  const m = pattern.exec(text);
  const port = Number(m?.[3]);
  const host = m?.[1] ?? m?.[2];
  if (host === undefined || !Number.isInteger(port) || port > 65_535) return undefined;
  return { host, port };
}
