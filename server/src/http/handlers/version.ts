import type { Core } from '../../domain/contract.js';
import type { OperationHandler } from './types.js';

export function versionHandlers(core: Core): Record<string, OperationHandler> {
  return {
    getVersion: async (_c, _req, res) => {
      res.status(200).json(core.version());
    },
  };
}
