/** Series colours, distinguishable for the common colour-vision deficiencies (Okabe–Ito), in order. */
export const palette = ['#0072B2', '#D55E00', '#009E73', '#CC79A7', '#E69F00', '#56B4E9', '#000000', '#999999'];

/** The colour a run outcome keeps on every chart: green done, red failed, the rest distinct. */
export const outcomeColours: Record<string, string> = {
  started: '#0072B2',
  Completed: '#009E73',
  Failed: '#D55E00',
  Compensated: '#CC79A7',
  Expired: '#E69F00',
  Cancelled: '#999999',
  Terminated: '#000000',
  TimedOut: '#56B4E9',
};

export const colourAt = (i: number) => palette[i % palette.length] ?? '#0072B2';
