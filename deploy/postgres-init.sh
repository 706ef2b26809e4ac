#!/bin/sh
# compose.yaml's db service runs this once, when its volume is new (/docker-entrypoint-initdb.d), as the image's
# superuser: the role the app connects as, with exactly what the server needs (README, "The database role"): no
# superuser, CONNECT on the database, USAGE and CREATE on the schema public, and the job queue's schema pgboss.
set -eu
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" \
  -v app_password="$(cat /run/secrets/app_db_password)" -v db="$POSTGRES_DB" <<'SQL'
CREATE ROLE secret_push_app LOGIN PASSWORD :'app_password';
REVOKE ALL ON DATABASE :"db" FROM PUBLIC;
GRANT CONNECT ON DATABASE :"db" TO secret_push_app;
REVOKE ALL ON SCHEMA public FROM PUBLIC;
GRANT USAGE, CREATE ON SCHEMA public TO secret_push_app;
CREATE SCHEMA pgboss AUTHORIZATION secret_push_app;
SQL
