/**
 * The proxy URLs a user points a scraper at (pure): the gateway's address
 * with the pool's username and the API key as password, once as an HTTP
 * proxy and once as SOCKS5 (`proxycheck pool gateway <id>` prints them).
 * The username may carry the grammar's options (username.ts); userinfo is
 * percent-encoded, an IPv6 host bracketed.
 */
import { formatGatewayUsername, type GatewayUser } from './username';

export interface GatewayUrls {
  http: string;
  socks5: string;
}

export function gatewayUrls(host: string, port: number, user: GatewayUser | string, apiKey: string): GatewayUrls {
  const name = typeof user === 'string' ? `pool-${user}` : formatGatewayUsername(user);
  const h = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  const auth = `${encodeURIComponent(name)}:${encodeURIComponent(apiKey)}`;
  return { http: `http://${auth}@${h}:${port}`, socks5: `socks5://${auth}@${h}:${port}` };
}
