/**
 * A workspace's brand page (issue 41; the brand of issue 42, docs/branding.md "A workspace's brand"): set by its
 * owner and admins through `WorkspaceBrandService.update`, the API's own service, after the contract's schema of
 * `updateWorkspaceBrand` (mapped to the API's 422 field messages by `brandValidationError`); the rules
 * (`checkWorkspaceBrand`: contrast, https links, the logo's kind, size and SVG content) answer beside each field, in
 * the page's language. The logo is uploaded as a file; a reset sets every field to the instance's. The preview is a
 * page in the workspace's brand.
 */
import type { Request, Response, Router } from 'express';
import type { ErrorObject } from 'ajv';
import { contract } from '@secret-push/contract';
import { ApiError, WORKSPACE_LOGO_MAX_BYTES } from '@secret-push/rules';
import type { UpdateWorkspaceBrandRequest, Workspace } from '@secret-push/sdk/generated';
import { brandValidationError } from '../../http/handlers/workspace-brand-handlers.js';
import type { WorkspaceBrandService } from '../../workspace/brand-service.js';
import { fieldText, type FieldForms } from '../field-text.js';
import { field } from '../forms.js';
import { PageError, type PageKit, type Visit } from '../page-kit.js';
import type { Viewer } from '../views/layout.js';
import { BRAND_FIELDS, brandPage, brandPreviewPage, type BrandPageState } from '../views/workspace-brand.js';
import { workspaceBrand } from '../workspace-brand.js';
import { refusalPage, visitedWorkspace } from './workspace-manage-pages.js';

/** The form: the fields, a logo of at most its limit (one byte more is kept, so the rule refuses it), some slack. */
const BRAND_FORM_BYTES = WORKSPACE_LOGO_MAX_BYTES + 64 * 1024;

/** A brand's field messages (rules/src/workspace-brand.ts), by catalogue key, in the order they are tried. */
const BRAND_FORMS: FieldForms = [
  [/reaches only ([0-9.]+):1/, 'workspaces.brand.error.contrast', (m) => ({ ratio: m[1]! })],
  [/hex colour/, 'workspaces.brand.error.colour'],
  [/https:\/\//, 'workspaces.brand.error.link'],
  [/an SVG logo may not hold/, 'workspaces.brand.error.svg'],
  [/256 KiB/, 'workspaces.brand.error.logoSize'],
  [/PNG, JPEG, WebP or SVG|base64|must not be empty/, 'workspaces.brand.error.logoKind'],
  [/characters|one line|only spaces/, 'workspaces.brand.error.text'],
];

/** A brand's refused field in the page's language (English: the API's words; else a sentence, or the API's inside one). */
function brandSentence(viewer: Viewer, message: string): string {
  if (viewer.i18n.locale === 'en') return message;
  const text = fieldText(viewer.i18n, message, BRAND_FORMS);
  return text !== message ? text : viewer.i18n.t('workspaces.refused.invalid', { reason: message });
}

let brandValidator: ReturnType<ReturnType<typeof contract>['validator']> | undefined;

/** The form as `updateWorkspaceBrand`'s body (an empty field unsets it), checked with the contract's schema. */
async function bodyOf(form: FormData): Promise<UpdateWorkspaceBrandRequest> {
  const brand: Record<string, unknown> = {};
  for (const f of BRAND_FIELDS) {
    const value = field(form, f).trim();
    brand[f] = value === '' ? null : value;
  }
  const file = form.get('logo');
  if (file instanceof File && file.size > 0) brand.logo = Buffer.from(await file.arrayBuffer()).toString('base64');
  else if (field(form, 'remove_logo') === 'on') brand.logo = null;
  const body = { brand };
  const spec = contract();
  brandValidator ??= spec.validator(spec.schema('UpdateWorkspaceBrandRequest'), 'page:UpdateWorkspaceBrandRequest');
  if (!brandValidator(body)) {
    const errors = (brandValidator.errors ?? []).map((e): ErrorObject => ({
      ...e,
      instancePath: `/requestBody${e.instancePath}`,
    }));
    throw brandValidationError(errors);
  }
  return body as UpdateWorkspaceBrandRequest;
}

export function workspaceBrandPages(router: Router, kit: PageKit): void {
  const service = (): WorkspaceBrandService => {
    if (!kit.core.workspaceBrands) throw new ApiError('not_found', 'Workspaces are not served by this instance.');
    return kit.core.workspaceBrands;
  };
  /** The workspace, once the visitor may set its brand (owner, admin); the API's refusals as pages. */
  const managed = async (req: Request, v: Visit): Promise<Workspace> => {
    const workspace = await visitedWorkspace(kit, req, v);
    if (workspace.role !== 'owner' && workspace.role !== 'admin')
      throw new PageError(403, { key: 'error.generic.title' }, { key: 'workspaces.refused.forbidden' });
    return workspace;
  };
  const show = async (req: Request, res: Response, v: Visit, status: number, state: Omit<BrandPageState, 'brand'>) => {
    const brand = await service().get(state.workspace.id, kit.ctxOf(req, v.user!.userId));
    kit.send(res, status, brandPage(v.viewer, { ...state, brand }));
  };
  /** Sets the brand through the API's service; a rule's refusal is shown beside its field. */
  const save = async (req: Request, res: Response, v: Visit, w: Workspace, body: UpdateWorkspaceBrandRequest) => {
    try {
      await service().update(w.id, body, kit.ctxOf(req, v.user!.userId));
    } catch (error) {
      if (!(error instanceof ApiError) || error.code !== 'validation_failed') throw refusalPage(v.viewer, error);
      const fields = Object.fromEntries(
        Object.entries(error.details.fields ?? {}).map(([f, messages]) => [
          f,
          messages.map((m) => brandSentence(v.viewer, m)),
        ]),
      );
      const values = Object.fromEntries(BRAND_FIELDS.map((f) => [f, String(body.brand[f] ?? '')]));
      return show(req, res, v, 422, { workspace: w, fields, values });
    }
    await show(req, res, v, 200, { workspace: w, notice: v.viewer.i18n.t('workspaces.brand.saved') });
  };

  router.get(
    '/workspaces/:id/brand',
    kit.pageRoute('/workspaces/:id/brand', async (req, res, v) => {
      if (!v.user) return kit.redirectToSignIn(req, res);
      await show(req, res, v, 200, { workspace: await managed(req, v) });
    }),
  );

  router.post(
    '/workspaces/:id/brand',
    kit.pageRoute('/workspaces/:id/brand', async (req, res, v) => {
      if (!v.user) return kit.redirectToSignIn(req, res);
      const form = await kit.postedForm(req, v, BRAND_FORM_BYTES, {
        maxFileBytes: WORKSPACE_LOGO_MAX_BYTES + 1,
        maxFiles: 1,
      });
      const workspace = await managed(req, v);
      let body: UpdateWorkspaceBrandRequest;
      try {
        body = await bodyOf(form);
      } catch (error) {
        if (!(error instanceof ApiError) || error.code !== 'validation_failed') throw refusalPage(v.viewer, error);
        const fields = Object.fromEntries(
          Object.entries(error.details.fields ?? {}).map(([f, m]) => [f, m.map((s) => brandSentence(v.viewer, s))]),
        );
        const values = Object.fromEntries(BRAND_FIELDS.map((f) => [f, field(form, f)]));
        return show(req, res, v, 422, { workspace, fields, values });
      }
      await save(req, res, v, workspace, body);
    }),
  );

  router.post(
    '/workspaces/:id/brand/reset',
    kit.pageRoute('/workspaces/:id/brand/reset', async (req, res, v) => {
      if (!v.user) return kit.redirectToSignIn(req, res);
      await kit.postedForm(req, v);
      const workspace = await managed(req, v);
      const none = Object.fromEntries([...BRAND_FIELDS, 'logo'].map((f) => [f, null]));
      await save(req, res, v, workspace, { brand: none } as UpdateWorkspaceBrandRequest);
    }),
  );

  router.get(
    '/workspaces/:id/brand/preview',
    kit.pageRoute('/workspaces/:id/brand/preview', async (req, res, v) => {
      if (!v.user) return kit.redirectToSignIn(req, res);
      const workspace = await managed(req, v);
      await workspaceBrand(kit, v, workspace.id);
      kit.send(res, 200, brandPreviewPage(v.viewer, workspace));
    }),
  );
}
