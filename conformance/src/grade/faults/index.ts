/** The fault catalogue: every fault the grader injects, one at a time. Add a fault to its class's list. */
import type { Fault } from '../fault.js';
import { fieldFaults, headerFaults, mediaFaults, statusFaults } from './wire.js';
import { optionFaults, orderFaults, valueFaults } from './values.js';
import { authFaults, leakFaults, raceFaults, viewFaults } from './state.js';
import { durationFaults, durationValueFaults, v1AuthFaults, v1Faults, v1MediaFaults, v1StateFaults, v1WireFaults } from './issue11.js';

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
  ...durationFaults,
  ...durationValueFaults,
  ...v1Faults,
  ...v1StateFaults,
  ...v1WireFaults,
  ...v1MediaFaults,
  ...v1AuthFaults,
];
