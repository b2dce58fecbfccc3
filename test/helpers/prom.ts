/** The value of one series in a Prometheus text body (0 when absent); `labels` must match exactly. */
export function sample(text: string, name: string, labels: Record<string, string>): number {
  const wanted = Object.entries(labels).map(([key, value]) => `${key}="${value}"`);
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const parts = line.slice(name.length + 1, line.indexOf('}')).split(',');
    if (parts.length === wanted.length && wanted.every((pair) => parts.includes(pair))) return Number(line.slice(line.indexOf('}') + 1));
  }
  return 0;
}
