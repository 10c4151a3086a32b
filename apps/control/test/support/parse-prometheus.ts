/** One sample line of the Prometheus text format: `name{label="value",...} 12`. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Exposition {
  samples: Sample[];
  /** `# TYPE name kind` lines. */
  types: Record<string, string>;
}

const sampleLine = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/;
const labelPair = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** A strict reader for the text format: a line it cannot read fails the test that reads it. */
export function parsePrometheus(text: string): Exposition {
  const samples: Sample[] = [];
  const types: Record<string, string> = {};
  for (const line of text.split('\n')) {
    if (line === '') continue;
    if (line.startsWith('# TYPE ')) {
      const [, , name = '', kind = ''] = line.split(' ');
      types[name] = kind;
      continue;
    }
    if (line.startsWith('#')) continue;
    const m = sampleLine.exec(line);
    if (!m) throw new Error(`not a Prometheus sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const pair of (m[2] ?? '').matchAll(labelPair))
      labels[pair[1] ?? ''] = (pair[2] ?? '').replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    const raw = m[3] ?? '';
    samples.push({ name: m[1] ?? '', labels, value: raw === '+Inf' ? Infinity : Number(raw) });
  }
  return { samples, types };
}

/** The samples of one metric name, as `label=value,...` → value, for exact comparison. */
export function seriesOf(exposition: Exposition, name: string, omit: string[] = []): Record<string, number> {
  const out: Record<string, number> = {};
  for (const s of exposition.samples.filter((x) => x.name === name)) {
    const key = Object.entries(s.labels)
      .filter(([k]) => !omit.includes(k))
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([k, v]) => `${k}=${v}`)
      .join(',');
    out[key] = s.value;
  }
  return out;
}
