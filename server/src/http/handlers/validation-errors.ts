/**
 * The v2 operations whose schema failures are said their own way (a wrapper object of their own, per-field 422s):
 * the edge (../api.ts) asks this table first, then says the rest as a push's or a request's.
 */
import type { ErrorObject } from 'ajv';
import type { ApiError } from '@secret-push/rules';
import { topLevelValidationError } from '../errors.js';
import { apiKeyValidationError } from './api-key-handlers.js';
import { webhookValidationError } from './webhook-handlers.js';
import { brandValidationError } from './workspace-brand-handlers.js';
import {
  memberValidationError,
  workspaceSettingsValidationError,
  workspaceValidationError,
} from './workspace-handlers.js';

export const OWN_VALIDATION_ERRORS: Readonly<Record<string, (errors: ErrorObject[]) => ApiError>> = {
  createApiKey: apiKeyValidationError,
  createWorkspace: workspaceValidationError,
  updateWorkspace: workspaceSettingsValidationError,
  updateWorkspaceMember: memberValidationError,
  updateWorkspaceBrand: brandValidationError,
  createWebhook: webhookValidationError,
  notifyEmails: topLevelValidationError,
};
