/**
 * An HTTP request sent from a chosen local address (127.0.0.x on loopback),
 * so tests can act as several clients: fetch cannot pick its source address.
 */
import http from 'node:http';

export interface FromAddressResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: any;
}

export function requestFrom(
  localAddress: string,
  url: string,
  init: { method?: string; headers?: Record<string, string>; json?: unknown } = {},
): Promise<FromAddressResponse> {
  const u = new URL(url);
  const body = init.json === undefined ? undefined : JSON.stringify(init.json);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: u.hostname.replace(/^\[|\]$/g, ''),
        port: Number(u.port),
        path: u.pathname + u.search,
        method: init.method ?? 'GET',
        localAddress,
        headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...init.headers },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => {
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            // not JSON: keep the text
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: parsed });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
