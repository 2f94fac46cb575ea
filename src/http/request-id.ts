/**
 * X-Request-Id (issue 22, DECISIONS "Failures that explain themselves"):
 * every response carries one, so a user can quote it and an operator can
 * find every log line of that request. Pure.
 *
 * A client's own id is kept when it is sane: 1 to 128 characters of
 * `A-Z a-z 0-9 . _ : + / = -` (UUIDs, ULIDs, base64 and the trace ids of
 * common proxies and tracers fit). Anything else (absent, empty, longer,
 * spaces, quotes, control or non-ASCII characters, several values joined by a
 * comma) is replaced by a generated one, a random UUID, never echoed: what
 * goes into headers and log lines is always one of these two shapes.
 */

export const REQUEST_ID_HEADER = 'X-Request-Id';
export const REQUEST_ID_MAX = 128;
const SANE = /^[A-Za-z0-9._:+/=-]{1,128}$/;

/** True when the client's X-Request-Id is kept as it is. */
export function isSaneRequestId(id: string): boolean {
  return SANE.test(id);
}

/** The request id of a request whose X-Request-Id header is `header` (null: absent). */
export function requestIdFor(header: string | null, generate: () => string = () => crypto.randomUUID()): string {
  return header !== null && isSaneRequestId(header) ? header : generate();
}
