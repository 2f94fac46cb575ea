/**
 * Binding a listener (public, admin, the judge's TLS, an agent's, the
 * gateway's): never on a port another process holds. Elysia asks Bun for
 * SO_REUSEPORT by default, which let a second instance bind the same port and
 * the kernel split the requests between two services; every listener here
 * asks for none (`reusePort: false`; Bun.listen, the gateway's, never does),
 * and a port in use is a one-line start error naming the setting
 * (`port_in_use`).
 */
import { ENTRY_ERROR_CODES } from '../error-codes';
import { ServiceError } from '../errors';

export interface Binding {
  /** The setting that names the port (PORT, ADMIN_PORT, JUDGE_TLS_PORT, GATEWAY_PORT). */
  setting: string;
  host: string;
  port: number;
}

function explain(err: unknown, b: Binding): unknown {
  if ((err as { code?: unknown } | null)?.code !== 'EADDRINUSE') return err;
  return new ServiceError(ENTRY_ERROR_CODES.PORT_IN_USE, `${b.setting}=${b.port} on ${b.host} is in use by another process: stop it or set another ${b.setting}`, { cause: err });
}

export function bind<T>(b: Binding, listen: () => T): T {
  try {
    return listen();
  } catch (err) {
    throw explain(err, b);
  }
}

export async function bindAsync<T>(b: Binding, listen: () => Promise<T>): Promise<T> {
  try {
    return await listen();
  } catch (err) {
    throw explain(err, b);
  }
}
