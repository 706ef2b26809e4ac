/**
 * The API's operations, typed from the generated SDK types: for each operationId, what its request carries (path
 * parameters, query, body) and what it may answer (status → body). A handler's reply must be one of the documented
 * statuses with that status's body type, so a handler returning the wrong shape does not compile.
 *
 * Adding an operation: add its line here (the generated `…Data` and `…Responses` types); `Handlers` makes a missing
 * handler a compile error (and openapi-backend, strict, refuses to start with a handler for an operation the spec
 * does not have).
 */
import type { Readable } from 'node:stream';
import type * as G from '@secret-push/sdk/generated';
import type { RequestContext } from '../request-context.js';

interface Operation<Data, Responses> {
  data: Data;
  responses: Responses;
}

interface Operations {
  getVersion: Operation<G.GetVersionData, G.GetVersionResponses>;
  createPush: Operation<G.CreatePushData, G.CreatePushResponses>;
  getPush: Operation<G.GetPushData, G.GetPushResponses>;
  previewPush: Operation<G.PreviewPushData, G.PreviewPushResponses>;
  expirePush: Operation<G.ExpirePushData, G.ExpirePushResponses>;
  getPushAudit: Operation<G.GetPushAuditData, G.GetPushAuditResponses>;
  listActivePushes: Operation<G.ListActivePushesData, G.ListActivePushesResponses>;
  listExpiredPushes: Operation<G.ListExpiredPushesData, G.ListExpiredPushesResponses>;
  downloadPushFile: Operation<G.DownloadPushFileData, G.DownloadPushFileResponses>;
  createRequest: Operation<G.CreateRequestData, G.CreateRequestResponses>;
  getRequest: Operation<G.GetRequestData, G.GetRequestResponses>;
  previewRequest: Operation<G.PreviewRequestData, G.PreviewRequestResponses>;
  respondToRequest: Operation<G.RespondToRequestData, G.RespondToRequestResponses>;
  revokeRequest: Operation<G.RevokeRequestData, G.RevokeRequestResponses>;
  getRequestAudit: Operation<G.GetRequestAuditData, G.GetRequestAuditResponses>;
  listActiveRequests: Operation<G.ListActiveRequestsData, G.ListActiveRequestsResponses>;
  listExpiredRequests: Operation<G.ListExpiredRequestsData, G.ListExpiredRequestsResponses>;
  createApiKey: Operation<G.CreateApiKeyData, G.CreateApiKeyResponses>;
  listApiKeys: Operation<G.ListApiKeysData, G.ListApiKeysResponses>;
  revokeApiKey: Operation<G.RevokeApiKeyData, G.RevokeApiKeyResponses>;
  listWorkspaces: Operation<G.ListWorkspacesData, G.ListWorkspacesResponses>;
  listAccounts: Operation<G.ListAccountsData, G.ListAccountsResponses>;
  createWorkspace: Operation<G.CreateWorkspaceData, G.CreateWorkspaceResponses>;
  updateWorkspace: Operation<G.UpdateWorkspaceData, G.UpdateWorkspaceResponses>;
  deleteWorkspace: Operation<G.DeleteWorkspaceData, G.DeleteWorkspaceResponses>;
  listWorkspaceMembers: Operation<G.ListWorkspaceMembersData, G.ListWorkspaceMembersResponses>;
  listWorkspaceAudit: Operation<G.ListWorkspaceAuditData, G.ListWorkspaceAuditResponses>;
  updateWorkspaceMember: Operation<G.UpdateWorkspaceMemberData, G.UpdateWorkspaceMemberResponses>;
  removeWorkspaceMember: Operation<G.RemoveWorkspaceMemberData, G.RemoveWorkspaceMemberResponses>;
  leaveWorkspace: Operation<G.LeaveWorkspaceData, G.LeaveWorkspaceResponses>;
  transferWorkspace: Operation<G.TransferWorkspaceData, G.TransferWorkspaceResponses>;
  getWorkspaceBrand: Operation<G.GetWorkspaceBrandData, G.GetWorkspaceBrandResponses>;
  updateWorkspaceBrand: Operation<G.UpdateWorkspaceBrandData, G.UpdateWorkspaceBrandResponses>;
  createWorkspaceInvitation: Operation<G.CreateWorkspaceInvitationData, G.CreateWorkspaceInvitationResponses>;
  listWorkspaceInvitations: Operation<G.ListWorkspaceInvitationsData, G.ListWorkspaceInvitationsResponses>;
  revokeWorkspaceInvitation: Operation<G.RevokeWorkspaceInvitationData, G.RevokeWorkspaceInvitationResponses>;
  acceptWorkspaceInvitation: Operation<G.AcceptWorkspaceInvitationData, G.AcceptWorkspaceInvitationResponses>;
  notifyEmails: Operation<G.NotifyEmailsData, G.NotifyEmailsResponses>;
  requestAccessCode: Operation<G.RequestAccessCodeData, G.RequestAccessCodeResponses>;
  createWebhook: Operation<G.CreateWebhookData, G.CreateWebhookResponses>;
  listWebhooks: Operation<G.ListWebhooksData, G.ListWebhooksResponses>;
  getWebhook: Operation<G.GetWebhookData, G.GetWebhookResponses>;
  deleteWebhook: Operation<G.DeleteWebhookData, G.DeleteWebhookResponses>;
  rotateWebhookSecret: Operation<G.RotateWebhookSecretData, G.RotateWebhookSecretResponses>;
  testWebhook: Operation<G.TestWebhookData, G.TestWebhookResponses>;
  listWebhookDeliveries: Operation<G.ListWebhookDeliveriesData, G.ListWebhookDeliveriesResponses>;
  retryWebhookDelivery: Operation<G.RetryWebhookDeliveryData, G.RetryWebhookDeliveryResponses>;
}

type OperationId = keyof Operations;

type Present<T> = [T] extends [undefined] ? Record<string, never> : Exclude<T, undefined>;
type Field<Data, K extends string> = K extends keyof Data ? Present<Data[K]> : Record<string, never>;

/** The request as openapi-backend parsed and validated it. */
interface HandlerRequest<Op extends OperationId> {
  params: Field<Operations[Op]['data'], 'path'>;
  /** The declared query parameters, as sent (text: openapi-backend checked what they coerce to). */
  query: { [K in keyof Field<Operations[Op]['data'], 'query'>]?: string };
  body: Operations[Op]['data'] extends { body: infer B } ? B : undefined;
  /** Request headers, lower-cased. */
  headers: Record<string, string | undefined>;
  /** The caller, `{base}`, the instant and the deadline, as the security step resolved them. */
  ctx: RequestContext;
  /** SHA-256 of the body as read (what "the same body" means for an Idempotency-Key). */
  bodyDigest: string | undefined;
}

/**
 * A documented binary body (`Blob | File` in the generated types) is bytes on the server: in memory, or a stream (a
 * file from the object store, written as it comes: ./api.ts `serialize`).
 */
type ServerBody<T> = T extends Blob ? Uint8Array | Readable : T;

/** One of the operation's documented success answers. */
type Reply<Op extends OperationId> = {
  [S in keyof Operations[Op]['responses']]: {
    status: S;
    body: ServerBody<Operations[Op]['responses'][S]>;
    headers?: Record<string, string>;
  };
}[keyof Operations[Op]['responses']];

type Handler<Op extends OperationId> = (request: HandlerRequest<Op>) => Promise<Reply<Op>>;

export type Handlers = { [Op in OperationId]: Handler<Op> };
