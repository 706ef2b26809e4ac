/** The create page: a push from the form, through the same domain call (and rules) as the API. */
import type { Router } from 'express';
import { ApiError, validationFailed } from '@secret-push/rules';
import type { PushInput } from '../../core.js';
import { maxBodyBytes } from '../../config/settings.js';
import { FORM_LIMITS } from '../../http/body-bounds.js';
import { field } from '../forms.js';
import type { PageKit } from '../page-kit.js';
import { createWorkspacesOf, workspaceOfForm } from './create-workspaces.js';
import { refusalText } from './workspace-refusals.js';

/** Refusals the create form answers by showing itself again, with what to do. */
const FORM_REFUSALS: ReadonlySet<string> = new Set([
  'validation_failed',
  'authentication_required',
  'storage_quota_exceeded',
  'payload_too_large',
  'forbidden',
  'two_factor_required',
  'single_sign_on_required',
]);
import { errorText } from '../error-text.js';
import { createdPage, createPage, type CreateFormState } from '../views/pushes.js';
import { fieldTexts } from '../field-text.js';

/**
 * The create form of a visitor who may not send files: the largest text push (1,048,576 characters of up to 4 bytes
 * in UTF-8) plus name, passphrase and multipart framing. Only visitors allowed to upload get the file-sized limit, so
 * an anonymous request cannot make the server buffer the full file allowance before it is refused.
 */
const TEXT_FORM_BYTES = 6 * 1024 * 1024;

/**
 * The form's `client_encryption` (create.js posts `<scheme>:<version>`) as the API's marker. Anything else is passed
 * on as it reads, so the contract's schema answers it (422 on client_encryption) like any API client's.
 */
function markerOf(value: string): PushInput['client_encryption'] {
  const [scheme = '', version = ''] = value.split(':');
  return { scheme, version: /^\d{1,4}$/.test(version) ? Number(version) : 0 } as PushInput['client_encryption'];
}

export function createPages(router: Router, kit: PageKit): void {
  const { core, settings } = kit;
  router.get(
    '/',
    kit.pageRoute('/', async (req, res, v) => {
      if (!v.user && !settings.allowAnonymous) return kit.redirectToSignIn(req, res);
      const workspaces = await createWorkspacesOf(kit, req, v.user?.userId ?? null);
      kit.send(res, 200, createPage(v.viewer, settings, { workspaces }));
    }),
  );

  router.post(
    '/',
    kit.pageRoute('/', async (req, res, v) => {
      if (!v.user && !settings.allowAnonymous) return kit.redirectToSignIn(req, res);
      const mayUpload = settings.enableFilePushes && (v.user !== null || !settings.filesRequireAuth);
      // Every file part is kept (cut one byte past the file limit), so the push rules answer on the form with their own
      // messages (too many files, a file too large); the byte limit bounds them all.
      const form = await kit.postedForm(req, v, mayUpload ? maxBodyBytes(settings) : TEXT_FORM_BYTES, {
        maxFileBytes: settings.fileMaxBytes,
        maxFiles: FORM_LIMITS.maxFields,
      });
      const kind = field(form, 'kind') || 'text';
      const intOrNaN = (name: string) => {
        const raw = field(form, name).trim();
        return /^-?\d{1,9}$/.test(raw) ? Number(raw) : raw === '' ? undefined : Number.NaN;
      };
      const payload = field(form, 'payload');
      const passphrase = field(form, 'passphrase');
      const name = field(form, 'name');
      const optionsPresent = form.has('options_present');
      const marker = field(form, 'client_encryption');
      // The box was ticked but nothing was encrypted (no script): refuse rather than store what the person wanted
      // encrypted. Nothing is stored; the form comes back with the plaintext they typed.
      const encrypt = form.has('encrypt_in_browser') || marker !== '';
      const input: PushInput = { kind: kind as PushInput['kind'] };
      if (marker !== '') input.client_encryption = markerOf(marker);
      if (payload !== '' || kind !== 'file') input.payload = payload;
      const days = intOrNaN('expire_after_days');
      const views = intOrNaN('expire_after_views');
      // A lifetime under a day, when one is chosen, replaces the days (which the form always sends).
      const duration = intOrNaN('expire_after_duration');
      if (duration !== undefined) input.expire_after_duration = duration;
      else if (days !== undefined) input.expire_after_days = days;
      if (views !== undefined) input.expire_after_views = views;
      if (passphrase !== '') input.passphrase = passphrase;
      if (v.user && name !== '') input.name = name;
      if (optionsPresent) {
        input.retrieval_step = form.has('retrieval_step');
        input.deletable_by_viewer = form.has('deletable_by_viewer');
      }
      const uploads = form
        .getAll('files')
        .filter((f): f is File => typeof f !== 'string' && (f.size > 0 || f.name !== ''));
      if (kind === 'file' || uploads.length > 0) {
        input.files = await Promise.all(
          uploads.map(async (f) => ({
            filename: f.name,
            content_type: f.type || 'application/octet-stream',
            content: Buffer.from(await f.arrayBuffer()).toString('base64'),
          })),
        );
      }
      let workspaceId: number | undefined;
      try {
        // The "Where" chooser: a workspace, through the create service's workspaceId (its rules apply as on the API).
        if (v.user) workspaceId = workspaceOfForm(form);
        if (encrypt && marker === '') {
          throw validationFailed({
            client_encryption: [v.viewer.i18n.t('create.error.notEncrypted')],
          });
        }
        const ctx = kit.ctxOf(req, v.user?.userId ?? null);
        const push = await core.pushes.create(input, ctx, workspaceId === undefined ? {} : { workspaceId });
        kit.send(res, 201, createdPage(v.viewer, push));
      } catch (error) {
        if (!(error instanceof ApiError) || !FORM_REFUSALS.has(error.code)) throw error;
        // Over a storage quota (or larger than it): the form comes back with the message that names the quota.
        const quota = error.code === 'storage_quota_exceeded' || error.code === 'payload_too_large';
        const refused =
          error.code === 'forbidden' ||
          error.code === 'two_factor_required' ||
          error.code === 'single_sign_on_required';
        if (error.details.retryAfterSeconds !== undefined)
          res.setHeader('Retry-After', String(error.details.retryAfterSeconds));
        const state: CreateFormState = {
          kind,
          // An encrypted push's payload is an envelope: never put back into the form (the plaintext never came here).
          payload: marker === '' ? payload : '',
          encrypt,
          name,
          expireAfterDays: Number.isFinite(days) ? days : undefined,
          expireAfterDuration: Number.isFinite(duration) ? duration : undefined,
          expireAfterViews: Number.isFinite(views) ? views : undefined,
          retrievalStep: input.retrieval_step,
          deletableByViewer: input.deletable_by_viewer,
          workspaces: await createWorkspacesOf(kit, req, v.user?.userId ?? null),
          workspaceId,
          error: quota
            ? errorText(v.viewer.i18n, error)
            : refused
              ? refusalText(v.viewer, error)
              : error.code === 'authentication_required'
                ? v.viewer.i18n.t('create.error.signInForFiles')
                : v.viewer.i18n.t(marker !== '' ? 'create.error.fieldsEncrypted' : 'create.error.fields'),
          fields: fieldTexts(v.viewer.i18n, error.details.fields),
        };
        kit.send(res, error.status, createPage(v.viewer, settings, state));
      }
    }),
  );
}
