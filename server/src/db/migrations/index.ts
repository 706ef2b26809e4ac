/**
 * Every migration, in order. A migration file that is not listed here is never applied: server/test/domain/schema.test.ts
 * fails when the folder and this list differ. (The list is explicit rather than read from the folder at run time so
 * that it survives bundling.)
 */
import { Migration20260101000000_initial } from './Migration20260101000000_initial.js';
import { Migration20260301000000_accounts } from './Migration20260301000000_accounts.js';
import { Migration20260601000000_client_encryption } from './Migration20260601000000_client_encryption.js';
import { Migration20261122000000_faults } from './Migration20261122000000_faults.js';
import { Migration20261122120000_durations } from './Migration20261122120000_durations.js';
import { Migration20261201000000_token_last_used } from './Migration20261201000000_token_last_used.js';
import { Migration20261202000000_storage_quotas } from './Migration20261202000000_storage_quotas.js';
import { Migration20261215000000_key_checks } from './Migration20261215000000_key_checks.js';
import { Migration20261220000000_email_notifications } from './Migration20261220000000_email_notifications.js';
import { Migration20261226000000_sign_in_factors } from './Migration20261226000000_sign_in_factors.js';
import { Migration20261227000000_requests } from './Migration20261227000000_requests.js';
import { Migration20261228000000_api_keys } from './Migration20261228000000_api_keys.js';
import { Migration20261229000000_request_mail } from './Migration20261229000000_request_mail.js';
import { Migration20261230000000_webhooks } from './Migration20261230000000_webhooks.js';
import { Migration20261231000000_user_storage_in_statement } from './Migration20261231000000_user_storage_in_statement.js';
import { Migration20270101000000_webhook_dispatch } from './Migration20270101000000_webhook_dispatch.js';
import { Migration20270102000000_lean_deliveries } from './Migration20270102000000_lean_deliveries.js';
import { Migration20270103000000_view_events } from './Migration20270103000000_view_events.js';
import { Migration20270104000000_user_storage_fits } from './Migration20270104000000_user_storage_fits.js';
import { Migration20270105000000_audit_entries_unkeyed } from './Migration20270105000000_audit_entries_unkeyed.js';
import { Migration20270106000000_webhook_outbox } from './Migration20270106000000_webhook_outbox.js';
import { Migration20270107000000_proven_emails } from './Migration20270107000000_proven_emails.js';
import { Migration20270108000000_webhook_limits } from './Migration20270108000000_webhook_limits.js';
import { Migration20270110000000_file_objects } from './Migration20270110000000_file_objects.js';
import { Migration20270111000000_request_storage } from './Migration20270111000000_request_storage.js';
import { Migration20270115000000_admin_console } from './Migration20270115000000_admin_console.js';
import { Migration20270120420000_recipient_access } from './Migration20270120420000_recipient_access.js';
import { Migration20270121000000_workspaces } from './Migration20270121000000_workspaces.js';
import { Migration20270125000000_unused_routines } from './Migration20270125000000_unused_routines.js';
import { Migration20270201000000_workspace_members } from './Migration20270201000000_workspace_members.js';
import { Migration20270203000000_user_locale } from './Migration20270203000000_user_locale.js';
import { Migration20270204000000_workspace_rules } from './Migration20270204000000_workspace_rules.js';
import { Migration20270207000000_workspace_brand } from './Migration20270207000000_workspace_brand.js';
import { Migration20270209000000_admin_workspace_audit } from './Migration20270209000000_admin_workspace_audit.js';
import { Migration20270211000000_workspace_single_sign_on } from './Migration20270211000000_workspace_single_sign_on.js';
import { Migration20270213000000_user_storage_shares } from './Migration20270213000000_user_storage_shares.js';
import { Migration20270205000000_workspace_invitations } from './Migration20270205000000_workspace_invitations.js';

export const migrationsList = [
  { name: 'Migration20260101000000_initial', class: Migration20260101000000_initial },
  { name: 'Migration20260301000000_accounts', class: Migration20260301000000_accounts },
  { name: 'Migration20260601000000_client_encryption', class: Migration20260601000000_client_encryption },
  { name: 'Migration20261122000000_faults', class: Migration20261122000000_faults },
  { name: 'Migration20261122120000_durations', class: Migration20261122120000_durations },
  { name: 'Migration20261201000000_token_last_used', class: Migration20261201000000_token_last_used },
  { name: 'Migration20261202000000_storage_quotas', class: Migration20261202000000_storage_quotas },
  { name: 'Migration20261215000000_key_checks', class: Migration20261215000000_key_checks },
  { name: 'Migration20261220000000_email_notifications', class: Migration20261220000000_email_notifications },
  { name: 'Migration20261226000000_sign_in_factors', class: Migration20261226000000_sign_in_factors },
  { name: 'Migration20261227000000_requests', class: Migration20261227000000_requests },
  { name: 'Migration20261228000000_api_keys', class: Migration20261228000000_api_keys },
  { name: 'Migration20261229000000_request_mail', class: Migration20261229000000_request_mail },
  { name: 'Migration20261230000000_webhooks', class: Migration20261230000000_webhooks },
  {
    name: 'Migration20261231000000_user_storage_in_statement',
    class: Migration20261231000000_user_storage_in_statement,
  },
  { name: 'Migration20270101000000_webhook_dispatch', class: Migration20270101000000_webhook_dispatch },
  { name: 'Migration20270102000000_lean_deliveries', class: Migration20270102000000_lean_deliveries },
  { name: 'Migration20270103000000_view_events', class: Migration20270103000000_view_events },
  { name: 'Migration20270104000000_user_storage_fits', class: Migration20270104000000_user_storage_fits },
  { name: 'Migration20270105000000_audit_entries_unkeyed', class: Migration20270105000000_audit_entries_unkeyed },
  { name: 'Migration20270106000000_webhook_outbox', class: Migration20270106000000_webhook_outbox },
  { name: 'Migration20270107000000_proven_emails', class: Migration20270107000000_proven_emails },
  { name: 'Migration20270108000000_webhook_limits', class: Migration20270108000000_webhook_limits },
  { name: 'Migration20270110000000_file_objects', class: Migration20270110000000_file_objects },
  { name: 'Migration20270111000000_request_storage', class: Migration20270111000000_request_storage },
  { name: 'Migration20270115000000_admin_console', class: Migration20270115000000_admin_console },
  { name: 'Migration20270120420000_recipient_access', class: Migration20270120420000_recipient_access },
  { name: 'Migration20270121000000_workspaces', class: Migration20270121000000_workspaces },
  { name: 'Migration20270125000000_unused_routines', class: Migration20270125000000_unused_routines },
  { name: 'Migration20270201000000_workspace_members', class: Migration20270201000000_workspace_members },
  { name: 'Migration20270203000000_user_locale', class: Migration20270203000000_user_locale },
  { name: 'Migration20270204000000_workspace_rules', class: Migration20270204000000_workspace_rules },
  {
    name: 'Migration20270205000000_workspace_invitations',
    class: Migration20270205000000_workspace_invitations,
  },
  { name: 'Migration20270207000000_workspace_brand', class: Migration20270207000000_workspace_brand },
  { name: 'Migration20270209000000_admin_workspace_audit', class: Migration20270209000000_admin_workspace_audit },
  {
    name: 'Migration20270211000000_workspace_single_sign_on',
    class: Migration20270211000000_workspace_single_sign_on,
  },
  { name: 'Migration20270213000000_user_storage_shares', class: Migration20270213000000_user_storage_shares },
];
