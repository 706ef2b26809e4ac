/** The fault catalogue: every fault the grader injects, one at a time. Add a fault to its class's list. */
import type { Fault } from '../fault.js';
import { fieldFaults, headerFaults, mediaFaults, statusFaults } from './wire.js';
import { optionFaults, orderFaults, valueFaults } from './values.js';
import { authFaults, leakFaults, raceFaults, viewFaults } from './state.js';
import {
  durationFaults,
  durationFieldFaults,
  durationValueFaults,
  v1AuthFaults,
  v1Faults,
  v1MediaFaults,
  v1StateFaults,
  v1WireFaults,
} from './issue11.js';
import { idempotencyFaults } from './idempotency.js';
import {
  e2eAuthFaults,
  e2eFieldFaults,
  e2eLeakFaults,
  e2eOptionFaults,
  e2eV1Faults,
  e2eValueFaults,
  e2eViewFaults,
} from './e2e.js';
import { requestFaults } from './requests.js';
import { hookAuthFaults, hookFaults, hookLeakFaults } from './webhooks.js';
import {
  accessAuthFaults,
  accessHeaderFaults,
  accessLeakFaults,
  accessOptionFaults,
  accessStatusFaults,
  accessValueFaults,
} from './recipient-access.js';
import { workspaceAuthFaults, workspaceOptionFaults, workspaceStatusFaults } from './workspaces.js';
import { workspaceRequestAuthFaults, workspaceRequestFaults } from './workspace-requests.js';
import { workspaceMemberAuthFaults, workspaceMemberStatusFaults } from './workspace-members.js';
import { workspaceDeletionFaults } from './workspace-deletion.js';

export const FAULTS: Fault[] = [
  ...statusFaults,
  ...fieldFaults,
  ...e2eFieldFaults,
  ...headerFaults,
  ...mediaFaults,
  ...valueFaults,
  ...e2eValueFaults,
  ...viewFaults,
  ...e2eViewFaults,
  ...raceFaults,
  ...orderFaults,
  ...leakFaults,
  ...e2eLeakFaults,
  ...e2eV1Faults,
  ...optionFaults,
  ...e2eOptionFaults,
  ...authFaults,
  ...durationFaults,
  ...durationValueFaults,
  ...durationFieldFaults,
  ...v1Faults,
  ...v1StateFaults,
  ...v1WireFaults,
  ...v1MediaFaults,
  ...v1AuthFaults,
  ...idempotencyFaults,
  ...e2eAuthFaults,
  ...requestFaults,
  ...hookFaults,
  ...hookLeakFaults,
  ...hookAuthFaults,
  ...accessOptionFaults,
  ...accessAuthFaults,
  ...accessStatusFaults,
  ...accessHeaderFaults,
  ...accessLeakFaults,
  ...accessValueFaults,
  ...workspaceOptionFaults,
  ...workspaceAuthFaults,
  ...workspaceStatusFaults,
  ...workspaceRequestFaults,
  ...workspaceRequestAuthFaults,
  ...workspaceMemberAuthFaults,
  ...workspaceMemberStatusFaults,
  ...workspaceDeletionFaults,
];
