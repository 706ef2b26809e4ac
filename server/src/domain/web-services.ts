/**
 * The domain side of the web pages: accounts, and the push state a recipient page is rendered from. Reading the
 * state is a plain SELECT (no view claimed, no audit entry), so the page can be fetched by link previewers and
 * scanners any number of times without consuming anything.
 */
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { createAccountService } from './account-service.js';
import type { Push, RequestContext, Settings, WebServices } from './contract.js';
import { guarded } from './database-errors.js';
import { pushRecord, trimBase, type PushRow } from './records.js';

export function createWebServices(orm: MikroORM, settings: Settings): WebServices {
  const accounts = guarded(createAccountService(orm, settings));
  const queries = guarded({
    async pushState(urlToken: string, ctx: RequestContext): Promise<Push | null> {
      if (typeof urlToken !== 'string' || urlToken.length === 0 || urlToken.length > 128) return null;
      const m = orm.em.fork() as EntityManager;
      const [row] = await m.execute<PushRow[]>('select * from pushes where url_token = ?', [urlToken]);
      if (!row) return null;
      return pushRecord(row, ctx.now ?? new Date(), trimBase(settings.publicBaseUrl ?? ctx.baseUrl));
    },
  });
  return { accounts, pushState: queries.pushState };
}
