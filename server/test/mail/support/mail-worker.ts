/**
 * A server process that only sends in the background (the job queue's emails, the webhook dispatcher's deliveries;
 * the API runs in the test): started by the restart tests as a child, killed with SIGKILL in the middle of a delivery,
 * and started again. Settings come from the environment, as the server's own do (loadSettings); it prints `ready`
 * once its workers are taking work.
 */
import { loadSettings } from '../../../src/config/settings.js';
import { createCore } from '../../../src/core.js';

const settings = loadSettings(process.env);
const core = await createCore(settings, {
  queue: { pollingIntervalSeconds: 0.5, monitorIntervalSeconds: 1, heartbeatSeconds: 10 },
  // A webhook delivery the killed process had in hand is due again after this (more than a try's 10 s).
  webhookLeaseSeconds: 12,
});
process.stdout.write('ready\n');
process.on('SIGTERM', () => {
  void core.close().then(() => process.exit(0));
});
