/**
 * An open pool's heading and cards (pool-format.ts poolCards), and where
 * the service runs a gateway (/health `gateway`) the pool's two gateway
 * URLs. The hidden `#pool-chart` section is where the working-now chart
 * over time goes (from the pool's rounds).
 */
import { win } from './browser';
import { byId, setText, show } from './dom';
import { poolCards, poolGatewayUrls, type PoolView } from './pool-format';
import { escapeXml } from './svg';

export const POOL_CARDS_IDS = Object.freeze({ title: 'pool-h', cards: 'pool-cards', gateway: 'pool-gateway', gatewayHttp: 'pool-gw-http', gatewaySocks5: 'pool-gw-socks5', chart: 'pool-chart' });

export function poolCardsHtml(): string {
  return `    <h2 id="pool-h"></h2>
    <dl id="pool-cards" class="cards"></dl>
    <details id="pool-gateway" class="pool-gateway" hidden>
      <summary>Gateway: one proxy address that rotates over this pool's working proxies</summary>
      <p class="hint">Point a scraper at either URL (your API key is the password; <code>proxycheck pool gateway &lt;id&gt;</code> prints the same).</p>
      <p><span class="downloads-label">HTTP</span> <code id="pool-gw-http" class="mono"></code></p>
      <p><span class="downloads-label">SOCKS5</span> <code id="pool-gw-socks5" class="mono"></code></p>
    </details>
    <section id="pool-chart" aria-label="Working proxies over time" hidden></section>`;
}

export type GatewayAt = { host: string | null; port: number } | null;

export function mountPoolCards(): { render(p: PoolView): void; renderGateway(p: PoolView | null, gateway: GatewayAt, key: string | null): void } {
  const ids = POOL_CARDS_IDS;
  return {
    render(p) {
      setText(byId(ids.title), p.name);
      byId(ids.cards).innerHTML = poolCards(p, Date.now())
        .map(([k, v]) => `<div class="card"><dt>${escapeXml(k)}</dt><dd>${escapeXml(v)}</dd></div>`)
        .join('');
    },
    renderGateway(p, gateway, key) {
      const urls = p === null || key === null ? null : poolGatewayUrls(gateway, win().location.hostname, p.id, key);
      show(byId(ids.gateway), urls !== null);
      setText(byId(ids.gatewayHttp), urls?.http ?? '');
      setText(byId(ids.gatewaySocks5), urls?.socks5 ?? '');
    },
  };
}
