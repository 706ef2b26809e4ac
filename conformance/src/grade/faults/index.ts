/** The fault catalogue: every fault the grader injects, one at a time. Add a fault to its class's list. */
import type { Fault } from '../fault.js';
import { fieldFaults, headerFaults, mediaFaults, statusFaults } from './wire.js';
import { optionFaults, orderFaults, valueFaults } from './values.js';
import { authFaults, leakFaults, raceFaults, viewFaults } from './state.js';
import { idempotencyFaults } from './idempotency.js';

export const FAULTS: Fault[] = [
  ...statusFaults,
  ...fieldFaults,
  ...headerFaults,
  ...mediaFaults,
  ...valueFaults,
  ...viewFaults,
  ...raceFaults,
  ...orderFaults,
  ...leakFaults,
  ...optionFaults,
  ...authFaults,
  ...idempotencyFaults,
];
