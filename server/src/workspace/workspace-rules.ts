/**
 * A workspace's sign-in rules (issue 41, `updateWorkspace`): the statements that change a workspace's name,
 * `require_two_factor`, `require_single_sign_on` and `sso_domain` under a lock on its row, with the entry of its trail, and the one that
 * makes a person of a workspace's email domain its member at their single sign-on.
 *
 * The rules themselves (who may, what a domain must be) are decided under the lock, from the rows read there: the
 * caller's role, whether their account has two-factor sign-in, whether their credential passes single sign-on, their
 * email's domain.
 */
import type { WorkspaceRole } from '@secret-push/sdk/generated';
import { MAX_MEMBERS_PER_WORKSPACE } from '@secret-push/rules';
import { isUniqueViolation } from '../db/database-errors.js';
import { sql, type Db } from '../db/sql.js';
import type { RequestContext } from '../request-context.js';
import { WORKSPACE_AUDIT } from './workspace-audit.js';

/**
 * How a caller's credential stands to a workspace's `require_single_sign_on`: a page's session says whether it began
 * at the instance's provider (true or false); an API credential (null) counts when its account is linked to an
 * identity at that provider (`user_identities` of the instance's issuer), as a token is authorised for single sign-on
 * by its user having signed in there. docs/workspaces.md, "Sign-in rules", says why.
 */
export type SignOnProof = boolean | null;

export const signOnProof = (ctx: Pick<RequestContext, 'session'>): SignOnProof =>
  ctx.session ? ctx.session.singleSignOn : null;

/**
 * The select-list column `sso_blocked` of a statement joining `workspaces w` and `users u`, with the parameters
 * `:viaSso` (a `SignOnProof`) and `:issuer` (the instance's provider; '' without single sign-on). One expression, so
 * every standing the workspace area reads decides the rule alike, in the statement it runs already.
 */
export const SSO_BLOCKED = `(w.require_single_sign_on and not coalesce(cast(:viaSso as boolean), exists (
       select 1 from user_identities i where i.user_id = u.id and rtrim(i.issuer, '/') = rtrim(:issuer, '/')))) as sso_blocked`;

/** The fields `updateWorkspace` changes; an absent field is kept. */
export interface WorkspaceSettingsChange {
  name?: string;
  requireTwoFactor?: boolean;
  requireSingleSignOn?: boolean;
  /** Lower case, or null to untie the workspace from its domain. */
  ssoDomain?: string | null;
}

/** Why a change was refused, and nothing changed. */
export type SettingsRefusal =
  /** The caller is not a member (or there is no such workspace). */
  | 'not_member'
  /** The workspace requires two-factor sign-in, and the caller's account has none. */
  | 'blocked'
  /** The workspace requires single sign-on, and the caller's credential did not come through it. */
  | 'sso_blocked'
  /** The caller's role does not manage the workspace. */
  | 'role'
  /** `requireTwoFactor` turned on by a caller without two-factor sign-in. */
  | 'own_two_factor'
  /** `requireSingleSignOn` turned on by a caller whose own credential would not pass it. */
  | 'own_single_sign_on'
  /** An `ssoDomain` that is not the domain of the caller's own email. */
  | 'domain_not_own'
  /** An `ssoDomain` another workspace is tied to. */
  | 'domain_taken';

const MANAGES: ReadonlySet<WorkspaceRole> = new Set(['owner', 'admin']);

/** The workspace's row after the change, with the caller's role. */
export type ChangedWorkspace = {
  id: number;
  name: string;
  require_two_factor: boolean;
  require_single_sign_on: boolean;
  sso_domain: string | null;
  created_at: Date;
  updated_at: Date;
  role: WorkspaceRole;
};

const R = {
  /** The caller's standing, with the workspace's row locked: two changes at once are made one after the other. */
  standing: sql<
    { workspaceId: number; userId: string; viaSso: SignOnProof; issuer: string },
    {
      role: WorkspaceRole;
      email: string;
      two_factor: boolean;
      require_two_factor: boolean;
      single_sign_on: boolean;
      require_single_sign_on: boolean;
    }
  >(
    `select m.role, u.email, u.totp_enabled_at is not null as two_factor, w.require_two_factor,
       coalesce(cast(:viaSso as boolean), exists (
         select 1 from user_identities i where i.user_id = u.id and rtrim(i.issuer, '/') = rtrim(:issuer, '/'))) as single_sign_on,
       w.require_single_sign_on
     from workspaces w
     join workspace_members m on m.workspace_id = w.id and m.user_id = :userId
     join users u on u.id = m.user_id
     where w.id = :workspaceId
     for update of w`,
  ),
  update: sql<
    {
      workspaceId: number;
      name: string | null;
      requireTwoFactor: boolean | null;
      requireSingleSignOn: boolean | null;
      setDomain: boolean;
      ssoDomain: string | null;
      now: Date;
    },
    Omit<ChangedWorkspace, 'role'>
  >(
    `update workspaces set
       name = coalesce(:name, name),
       require_two_factor = coalesce(cast(:requireTwoFactor as boolean), require_two_factor),
       require_single_sign_on = coalesce(cast(:requireSingleSignOn as boolean), require_single_sign_on),
       sso_domain = case when :setDomain then :ssoDomain else sso_domain end,
       updated_at = :now
     where id = :workspaceId
     returning id, name, require_two_factor, require_single_sign_on, sso_domain, created_at, updated_at`,
  ),
  /**
   * A person signing in by single sign-on joins, as a member, each workspace tied to their email's domain, unless
   * they left it or were removed from it before (their choice, or an admin's, stands), or it is full. Each join is in
   * the workspace's trail.
   */
  joinByDomain: sql<{ userId: string; email: string; domain: string; now: Date; limit: number }, { n: number }>(
    `with joined as (
       insert into workspace_members (workspace_id, user_id, role, created_at)
       select w.id, :userId, 'member', :now from workspaces w
       where w.sso_domain = :domain
         and (select count(*) from workspace_members c where c.workspace_id = w.id) < :limit
         and not exists (
           select 1 from workspace_audit a
           where a.workspace_id = w.id and a.subject_id = :userId and a.action in ('member_removed', 'member_left'))
       on conflict do nothing
       returning workspace_id
     ), trail as (
       insert into workspace_audit (workspace_id, action, actor_id, subject_id, subject_email, role, at)
       select workspace_id, 'member_joined_by_domain', :userId, :userId, :email, 'member', :now from joined
     )
     select count(*)::int as n from joined`,
  ),
};

/** The email's domain, lower case. */
const emailDomain = (email: string): string => email.slice(email.lastIndexOf('@') + 1).toLowerCase();

/**
 * Makes `change` by `userId` under a lock on the workspace's row, with its trail's entry; the workspace as the caller
 * now sees it, or why nothing changed.
 */
export async function changeSettings(
  db: Db,
  workspaceId: number,
  caller: { userId: string; viaSso: SignOnProof; issuer: string },
  change: WorkspaceSettingsChange,
  now: Date,
): Promise<ChangedWorkspace | SettingsRefusal> {
  const { userId } = caller;
  try {
    return await db.transaction(async (tx) => {
      const [me] = await tx.query(R.standing, { workspaceId, ...caller });
      if (!me) return 'not_member';
      if (me.require_two_factor && !me.two_factor) return 'blocked';
      if (me.require_single_sign_on && !me.single_sign_on) return 'sso_blocked';
      if (!MANAGES.has(me.role)) return 'role';
      if (change.requireTwoFactor === true && !me.two_factor) return 'own_two_factor';
      if (change.requireSingleSignOn === true && !me.single_sign_on) return 'own_single_sign_on';
      if (change.ssoDomain != null && emailDomain(me.email) !== change.ssoDomain) return 'domain_not_own';
      const [row] = await tx.query(R.update, {
        workspaceId,
        name: change.name ?? null,
        requireTwoFactor: change.requireTwoFactor ?? null,
        requireSingleSignOn: change.requireSingleSignOn ?? null,
        setDomain: change.ssoDomain !== undefined,
        ssoDomain: change.ssoDomain ?? null,
        now,
      });
      await tx.query(WORKSPACE_AUDIT.insert, {
        workspaceId,
        action: 'settings_changed',
        actorId: userId,
        subjectId: userId,
        subjectEmail: me.email,
        role: null,
        now,
      });
      return { ...row!, role: me.role };
    });
  } catch (err) {
    // Another workspace took the domain between this one's read and its write (the unique constraint decides).
    if (isUniqueViolation(err)) return 'domain_taken';
    throw err;
  }
}

/** `joinByDomain` for the person who just signed in by single sign-on; how many workspaces they joined. */
export async function joinByEmailDomain(db: Db, userId: string, email: string, now: Date): Promise<number> {
  const [row] = await db.query(R.joinByDomain, {
    userId,
    email,
    domain: emailDomain(email),
    now,
    limit: MAX_MEMBERS_PER_WORKSPACE,
  });
  return row?.n ?? 0;
}
