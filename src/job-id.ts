/**
 * A client's job id (POST /check `jobId`, /ws?jobId=, the CLI's --job-id):
 * 3 to 64 letters, digits, "_" or "-". The one definition; the API's
 * validation, its OpenAPI pattern and error message, the WebSocket route and
 * the CLI all use it. Pure.
 */

/** The pattern as text (the OpenAPI `pattern`). */
export const JOB_ID_PATTERN = '^[A-Za-z0-9_-]{3,64}$';
export const JOB_ID = new RegExp(JOB_ID_PATTERN);
/** The rule in words, for error messages ("jobId must be …", "--job-id must be …"). */
export const JOB_ID_RULE = '3 to 64 characters of letters, digits, "_" or "-"';

export function isJobId(value: string): boolean {
  return JOB_ID.test(value);
}
