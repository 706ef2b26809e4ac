import type { Core } from '../../core.js';
import type { Handlers } from '../operations.js';

export function versionHandler(core: Core): Pick<Handlers, 'getVersion'> {
  return { getVersion: async () => ({ status: 200, body: core.version() }) };
}
