/**
 * The API's refusals of a workspace change, said in the page's language (the pages call the API's services, so
 * these are the API's own errors: docs/workspaces.md lists them). Any other code is said as every page says a refusal
 * (error-text.ts); a rule's field reason that has no sentence of its own here is shown as the API says it.
 */
import type { ApiError } from '@secret-push/rules';
import { errorText } from '../error-text.js';
import type { Viewer } from '../views/layout.js';
import { fieldsLine } from '../field-text.js';

export function refusalText(viewer: Viewer, error: ApiError, leaving = false): string {
  const { t } = viewer.i18n;
  const fields = error.details.fields ?? {};
  switch (error.code) {
    case 'two_factor_required':
      return t('workspaces.refused.twoFactor');
    case 'single_sign_on_required':
      return t('workspaces.refused.singleSignOn');
    case 'forbidden':
      return t('workspaces.refused.forbidden');
    case 'not_found':
      return t('workspaces.refused.gone');
    case 'validation_failed':
      if (leaving && 'workspace' in fields) return t('workspaces.refused.ownerLeaves');
      if ('invitation' in fields) return t('workspaces.refused.full');
      if ('email' in fields) return t('workspaces.refused.email');
      if ('confirm' in fields) return t('workspaces.refused.confirm');
      return t('workspaces.refused.invalid', {
        reason:
          viewer.i18n.locale === 'en'
            ? Object.values(fields).flat().join('; ') || error.message
            : fieldsLine(viewer.i18n, error, false),
      });
    default:
      return errorText(viewer.i18n, error);
  }
}
