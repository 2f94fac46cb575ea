/** The service's version: package.json's "version", the one source (/health, the OpenAPI document). */
import pkg from '../package.json' with { type: 'json' };

export const VERSION: string = pkg.version;
