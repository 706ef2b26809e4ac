import { Migration } from '@mikro-orm/migrations';

/**
 * `audit_entries` lose their foreign key to `pushes`; a statement trigger deletes a push's entries with it.
 *
 * The key's check ran on every create and every view: each insert of a `creation` or `view` entry looked the push up
 * again and took a `for key share` lock on its row (a row lock is a WAL record of its own), though the entry is
 * written by the very statement that inserts or updates that row (`from push`, `from won`). The bench measured the
 * difference (`npm run bench`, `BENCH_SERVERS=ours,physical`, c16, two pairs of runs): PostgreSQL's CPU per anonymous
 * create 0.45 and 0.44 ms without the key against 0.51 and 0.57 ms with it, and per create+retrieve 0.56 and 0.55 ms
 * against 0.60 and 0.69 ms.
 *
 * - Entries for a push that the statement does not itself write (a failed view, a wrong passphrase, an emailed link,
 *   insertAudit) lock the push's row `for key share` in their own statement, as the key did, and are not written when
 *   the push is gone (the key answered an error then). So a delete waits for them, and its trigger sees them.
 * - `pushes_forget_audit` (after delete, for each statement, with the deleted rows) deletes the entries of the pushes
 *   deleted, whoever deletes them: the purge, a user's deletion, a test.
 */
export class Migration20270105000000_audit_entries_unkeyed extends Migration {
  override name = 'Migration20270105000000_audit_entries_unkeyed';

  override up(): void {
    this.addSql(`alter table "audit_entries" drop constraint "audit_entries_push_id_foreign";`);
    this.addSql(`create function "audit_entries_forget"() returns trigger language plpgsql as $$
      begin
        delete from audit_entries a using gone g where a.push_id = g.id;
        return null;
      end
      $$;`);
    this.addSql(`create trigger "pushes_forget_audit" after delete on "pushes" referencing old table as gone
      for each statement execute function audit_entries_forget();`);
  }

  override down(): void {
    this.addSql(`drop trigger if exists "pushes_forget_audit" on "pushes";`);
    this.addSql(`drop function if exists "audit_entries_forget"();`);
    this.addSql(`delete from "audit_entries" a where not exists (select 1 from "pushes" p where p.id = a.push_id);`);
    this.addSql(`alter table "audit_entries" add constraint "audit_entries_push_id_foreign"
      foreign key ("push_id") references "pushes" ("id") on delete cascade;`);
  }
}
