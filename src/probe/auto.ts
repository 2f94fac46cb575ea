/**
 * One `type: "auto"` probe: the proxy is tried as http, socks4 and socks5,
 * each a full judge probe (runProbe, src/probe/probe.ts), all inside the
 * job's one `timeout`. The decisions on the outcomes are pure
 * (codec/auto-verdict.ts); this file only orders the attempts.
 *
 * ## How the protocols are tried
 *
 *   1. http alone, with the whole budget (the lead). Its request decides
 *      from the first bytes: a SOCKS4 or SOCKS5 server reads "G" where it
 *      expects its version byte (4 or 5) and refuses at once, so a SOCKS
 *      proxy costs the lead about one round trip after the connect. A SOCKS
 *      greeting sent first would not do the same for an HTTP proxy: it
 *      carries no line end, and squid or tinyproxy wait for one until the
 *      budget runs out.
 *   2. A lead that failed before the TCP connection was up (refused, black
 *      hole, DNS, the SSRF guard, our own exhaustion: auto-verdict.ts
 *      LEAD_FINAL_CODES) ends the probe: the SOCKS attempts would reach the
 *      same closed port. Dead proxies, most of a public list, so cost one
 *      socket, as in a probe of one type.
 *   3. Otherwise socks5 and socks4 run in parallel (two connections) with
 *      what is left of the budget, whatever the lead's verdict: a port may
 *      speak several protocols (3proxy's and gost's auto ports, dante), and
 *      `protocols` must list every one that passed the full judge check.
 *
 * The cost of step 3: an HTTP proxy fed a SOCKS handshake usually waits for
 * the rest of a request line, so a working HTTP proxy's auto probe ends when
 * the budget does (its record is known then, its `responseTime` is still
 * the http probe's own). A SOCKS proxy's attempts start a round trip or two
 * after the lead's connect, so they have that much less of the budget.
 *
 * With a TLS judge (settings.tlsJudge) each attempt that passes gets its
 * own https check (runProbe: https-check.ts) right away, in what is left of
 * the budget, so an HTTP proxy's check runs while the SOCKS attempts still
 * wait; the record's `https` is that of the protocol it names, and a tunnel
 * that presented another certificate in any attempt fails the whole proxy
 * (codec/auto-verdict.ts).
 *
 * Never rejects (runProbe never does); resolves at most a few ms after
 * settings.timeoutMs.
 */
import type { ProxyType } from '../proxy/types';
import { autoResult, leadSettles, type AutoAttempts } from './codec/auto-verdict';
import { runProbe } from './probe';
import type { ProbeResult, ProbeSettings, ProbeTask, ProtocolSettings } from './types';

/** Below this much budget left the SOCKS attempts are not started (they could not connect in time). */
export const MIN_ATTEMPT_MS = 1;

/** The settings of one protocol with `timeoutMs` of budget, from an auto job's settings. */
export function protocolSettings(settings: ProbeSettings, type: ProxyType, timeoutMs: number): ProtocolSettings {
  return { ...settings, type, timeoutMs };
}

export async function runAutoProbe(task: ProbeTask, settings: ProbeSettings): Promise<ProbeResult> {
  const started = performance.now();
  const lead = await runProbe(task, protocolSettings(settings, 'http', settings.timeoutMs));
  const tried: AutoAttempts = { http: lead };
  if (!leadSettles(lead)) {
    const left = settings.timeoutMs - (performance.now() - started);
    if (left >= MIN_ATTEMPT_MS) {
      const [socks5, socks4] = await Promise.all([
        runProbe(task, protocolSettings(settings, 'socks5', left)),
        runProbe(task, protocolSettings(settings, 'socks4', left)),
      ]);
      tried.socks5 = socks5;
      tried.socks4 = socks4;
    }
  }
  return autoResult(task.index, tried);
}
