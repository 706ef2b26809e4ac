import { Migration } from '@mikro-orm/migrations';

/**
 * A user's storage quota counted inside the create's own statement (push-repository.ts). `user_storage_used` takes
 * the user's storage lock (the advisory lock that the transaction path takes too, so both count one after the other)
 * and then sums the bytes of the user's active pushes. It is VOLATILE, so its query takes a fresh snapshot after the
 * lock is granted: it sees every create that held the lock before and committed, which a snapshot taken at the start
 * of the calling statement would not. The lock is held until the create commits, with no round trip to the client in
 * between (the transaction path held it across three).
 */
export class Migration20261231000000_user_storage_in_statement extends Migration {
  override name = 'Migration20261231000000_user_storage_in_statement';

  override up(): void {
    this.addSql(`create function "user_storage_used"(p_user uuid, p_now timestamptz) returns bigint
      language plpgsql volatile as $$
      declare
        used bigint;
      begin
        perform pg_advisory_xact_lock(hashtextextended('user-storage:' || p_user::text, 0));
        select coalesce(sum(stored_bytes), 0) into used from pushes
          where user_id = p_user and not expired and expires_at > p_now;
        return used;
      end
      $$;`);
  }

  override down(): void {
    this.addSql(`drop function if exists "user_storage_used"(uuid, timestamptz);`);
  }
}
