/** The chart windows the overview offers (the API's series windows), kept in the URL as `window`. */
export const chartWindows = [
  { value: '1h', label: 'Last hour (per minute)', words: 'hour' },
  { value: '6h', label: 'Last 6 hours (per minute)', words: '6 hours' },
  { value: '24h', label: 'Last 24 hours (per hour)', words: '24 hours' },
  { value: '7d', label: 'Last 7 days (per hour)', words: '7 days' },
] as const;
export type ChartWindow = (typeof chartWindows)[number]['value'];

export function parseChartWindow(raw: string | string[] | undefined): ChartWindow {
  return chartWindows.find((w) => w.value === raw)?.value ?? '1h';
}
