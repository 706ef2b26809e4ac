import { Migration } from '@mikro-orm/migrations';

/** The function's definition (also what Migration20270125000000_unused_routines's `down` puts back). */
export const WEBHOOK_VIEW_EVENTS = `create function "webhook_view_events"(
        p_push uuid, p_user uuid, p_views_used int, p_expired boolean, p_kind text, p_passphrase_protected boolean,
        p_expire_after_views int, p_expires_at timestamptz, p_created_at timestamptz, p_name_ciphertext text,
        p_now timestamptz, p_ip text, p_user_agent text, p_referrer text, p_lease timestamptz)
      returns json language plpgsql volatile as $$
      declare
        written json;
      begin
        with ev as materialized (
          select v.event, gen_random_uuid() as event_id, json_build_object('type', v.event,
              'timestamp', iso_time(p_now), 'data', json_build_object(
                'push_id', p_push, 'kind', p_kind, 'name', '', 'passphrase_protected', p_passphrase_protected,
                'expire_after_views', p_expire_after_views,
                'views_remaining', greatest(p_expire_after_views - p_views_used, 0),
                'expires_at', iso_time(p_expires_at), 'expired', p_expired, 'created_at', iso_time(p_created_at),
                v.extra_key, v.extra))::text as facts
          from (values
            ('push.viewed', 'viewer', json_build_object('ip', left(p_ip, 64), 'user_agent', left(p_user_agent, 255),
              'referrer', left(p_referrer, 255))),
            ('push.expired', 'reason', to_json('views'::text))
          ) as v(event, extra_key, extra)
          where v.event = 'push.viewed' or p_expired
        ), d as (
          insert into webhook_deliveries
            (id, webhook_id, event, event_id, facts, name_ciphertext, status, attempts, next_attempt_at, created_at)
          select 'msg_' || left(replace(gen_random_uuid()::text, '-', '') || replace(gen_random_uuid()::text, '-', ''), 26),
            w.id, ev.event, ev.event_id, ev.facts, p_name_ciphertext, 'pending', 0, p_lease, p_now
          from ev join webhooks w on w.user_id = p_user and w.enabled and ev.event = any(w.events)
          returning *
        )
        select json_agg(json_build_object('d', row_to_json(d), 'w', row_to_json(w))) into written
        from d join webhooks w on w.id = d.webhook_id;
        return written;
      end
      $$;`;

/**
 * `webhook_view_events`: the events of a view, made and written by the view's one statement (push-repository.ts's
 * viewByToken with webhooks/webhook-repository.ts's VIEW_EVENT_CTES), only for an owner with an enabled webhook.
 *
 * In the statement itself, the events' JSON expressions and the deliveries' insert were part of every view's plan, and
 * PostgreSQL sets a plan's expressions and result relations up at each execution, run or not: every view (anonymous,
 * or of an owner without webhooks) paid 10% more of PostgreSQL's CPU for events it never made. A PL/pgSQL function's
 * plans are prepared once per connection and run only when it is called.
 *
 * It writes `push.viewed` (and `push.expired`, reason `views`, when the view was the last) for each enabled webhook of
 * the owner subscribed to it: the event's facts (the JSON the server makes, with an empty name; `iso_time` writes the
 * times as JavaScript does), the push name's envelope, leased until `p_lease`. It answers the deliveries written, each
 * with its webhook (`{d, w}`), for the process to send them (null: none).
 *
 * Not called since Migration20270106000000_webhook_outbox (a view's events are its audit entry, fanned out later:
 * webhooks/outbox.ts); dropped by Migration20270125000000_unused_routines.
 */
export class Migration20270103000000_view_events extends Migration {
  override name = 'Migration20270103000000_view_events';

  override up(): void {
    this.addSql(WEBHOOK_VIEW_EVENTS);
  }

  override down(): void {
    this.addSql(`drop function if exists "webhook_view_events"(uuid, uuid, int, boolean, text, boolean, int,
      timestamptz, timestamptz, text, timestamptz, text, text, text, timestamptz);`);
  }
}
