/**
 * The v2 operations whose schema failures are said their own way (a wrapper object of their own, per-field 422s):
 * the edge (../api.ts) asks this table first, then says the rest as a push's or a request's.
 */
import type { ErrorObject } from 'ajv';
import type { ApiError } from '@secret-push/rules';
import type { PushFrame } from '../body-refusal.js';
import { topLevelValidationError } from '../errors.js';
import { apiKeyValidationError } from './api-key-handlers.js';
import { invitationValidationError } from './invitation-handlers.js';
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
  createWorkspaceInvitation: invitationValidationError,
  acceptWorkspaceInvitation: invitationValidationError,
  createWebhook: webhookValidationError,
  notifyEmails: topLevelValidationError,
};

/**
 * Where each operation's JSON body holds the fields that a bound passed there (../body-bounds.ts) is a 422 on, named;
 * elsewhere, and for an operation not listed, a bound passed is a 400.
 */
export const PUSH_FRAMES: Readonly<Record<string, PushFrame>> = {
  createPush: { wrapper: 'push', topLevel: false },
  respondToRequest: { wrapper: 'push', topLevel: false },
  createApiKey: { wrapper: 'api_key', topLevel: false },
  createWorkspaceInvitation: { wrapper: 'invitation', topLevel: false },
  acceptWorkspaceInvitation: { wrapper: 'invitation', topLevel: false },
  createWebhook: { wrapper: 'webhook', topLevel: false },
  updateWorkspace: { wrapper: 'workspace', topLevel: false },
  // Its fields stand at the top level: a bound passed there is a 422 on the field.
  notifyEmails: { wrapper: '', topLevel: true },
};
