#!/bin/sh
# Makes the secrets compose.yaml reads, once: ./secrets/master_key (the encryption key), ./secrets/postgres_password
# (the db service's superuser, for administration only), ./secrets/app_db_password (the role the app connects as, made
# by deploy/postgres-init.sh) and ./secrets/database_url (the app's connection, as that role). An existing file is kept:
# a new master key would make every stored secret unreadable. The folder is private (0700); the files are 0644 so that
# the containers' own users (10001 for the app, postgres for the database) can read them through the bind mount.
set -eu
cd "$(dirname "$0")/.."
umask 022
mkdir -p secrets
chmod 0700 secrets
random_hex() { od -An -tx1 -N"$1" /dev/urandom | tr -d ' \n'; }
if [ ! -s secrets/master_key ]; then
  random_hex 32 > secrets/master_key
  echo "secrets/master_key: made (keep a copy apart from your backups: without it nothing stored can be read)"
fi
if [ ! -s secrets/postgres_password ]; then
  random_hex 24 > secrets/postgres_password
  echo "secrets/postgres_password: made"
fi
if [ ! -s secrets/app_db_password ]; then
  random_hex 24 > secrets/app_db_password
  echo "secrets/app_db_password: made"
fi
if [ ! -s secrets/database_url ]; then
  printf 'postgres://secret_push_app:%s@db:5432/secret_push\n' "$(cat secrets/app_db_password)" > secrets/database_url
  echo "secrets/database_url: made"
fi
chmod 0644 secrets/master_key secrets/postgres_password secrets/app_db_password secrets/database_url
