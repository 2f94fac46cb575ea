/**
 * The proxy-list bodies the parser micro-benchmarks share (bench/micro-parse.ts,
 * bench/micro-check-request.ts): strings only, nothing connects to them.
 */

/** A spread of IPv4 addresses, one per index. */
export const ip = (i: number) => `${10 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}.${(i * 7) & 255}`;

function mixedLine(i: number, out: string[]): string {
  const port = 1024 + (i % 60000);
  switch (i % 10) {
    case 0:
      return `socks5://${ip(i)}:${port}`;
    case 1:
      return `user${i}:p%40ss${i}@proxy-${i}.example.com:${port}`;
    case 2:
      return `${ip(i)}:${port}:user${i}:secret:${i}`;
    case 3:
      return `[2001:db8::${(i & 0xffff).toString(16)}]:${port}`;
    case 4:
      return i % 20 === 4 ? '# comment line' : `  Proxy${i}.Example.NET:${port}/  `;
    case 5:
      return i % 50 === 5 ? 'not a proxy' : `172.${(i >> 8) & 255}.${i & 255}.1:${port}`;
    case 6:
      return out[i - 6] ?? '1.1.1.1:80'; // duplicate
    default:
      return `192.168.${(i >> 8) & 255}.${i & 255}:${port}`;
  }
}

/**
 * `count` lines mixing every accepted form (IPv4, host names, URL auth, colon
 * auth, IPv6, schemes), comments, invalid lines and duplicates.
 */
export function mixedLines(count: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < count; i++) out.push(mixedLine(i, out));
  return out;
}
