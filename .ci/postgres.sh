#!/usr/bin/env bash
# A throwaway PostgreSQL server on 127.0.0.1 for the distributed-study tests.
#
#   .ci/postgres.sh URL_FILE        install Debian's postgresql if missing, start a fresh cluster in a
#                                   temp dir on a free loopback port, create a role (random password,
#                                   CREATEDB) and a database, write the URL to URL_FILE (mode 600)
#   .ci/postgres.sh stop URL_FILE   stop that cluster and delete its data dir and URL_FILE
#
# Idempotent: starting again while the recorded cluster answers changes nothing; stopping a cluster
# that is gone only cleans up. The password is never printed: it goes to URL_FILE and, for
# CREATE ROLE, to psql's stdin (not its argv, so `ps` does not show it). Exports nothing; use e.g.
#   export TUNER_TEST_PG_URL="$(cat /tmp/tuner-pg.url)"
# As root, the cluster runs as the `postgres` user (initdb refuses root); otherwise as the caller.
set -euo pipefail

usage() { echo "usage: $0 URL_FILE | $0 stop URL_FILE" >&2; exit 2; }

mode=start
if [ "${1:-}" = stop ]; then mode=stop; shift; fi
[ $# -eq 1 ] || usage
url_file=$1
state_file="$url_file.pgdir"   # the cluster's temp dir, beside the URL file

as_owner() {  # run a PostgreSQL binary as the cluster's owner
    if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

find_bindir() {
    local d
    if command -v pg_config >/dev/null 2>&1 && [ -x "$(pg_config --bindir)/initdb" ]; then
        pg_config --bindir; return 0
    fi
    # Debian keeps the server binaries out of PATH, one directory per major version: take the newest.
    for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
        if [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ]; then echo "$d"; return 0; fi
    done
    return 1
}

stop_cluster() {
    [ -f "$state_file" ] || { rm -f "$url_file"; return 0; }
    local dir bindir
    dir=$(cat "$state_file")
    bindir=$(find_bindir || true)
    if [ -n "$bindir" ] && [ -f "$dir/data/postmaster.pid" ]; then
        as_owner "$bindir/pg_ctl" -D "$dir/data" -m fast -w -t 60 stop >/dev/null 2>&1 || true
    fi
    case "$dir" in
        */tuner-pg.*) rm -rf -- "$dir" ;;   # only ever delete a dir this script made
    esac
    rm -f "$state_file" "$url_file"
}

if [ "$mode" = stop ]; then
    stop_cluster
    echo "postgres: stopped"
    exit 0
fi

bindir=$(find_bindir || true)
if [ -z "$bindir" ]; then
    if [ "$(id -u)" != 0 ]; then
        echo "postgres: PostgreSQL is not installed and this is not root; install it " \
             "(apt-get install postgresql) or set TUNER_TEST_PG_URL to a server you have" >&2
        exit 1
    fi
    echo "postgres: installing Debian's postgresql package"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq postgresql >/dev/null
    bindir=$(find_bindir) || { echo "postgres: installed, but no initdb under /usr/lib/postgresql" >&2; exit 1; }
fi
if [ "$(id -u)" = 0 ] && ! id postgres >/dev/null 2>&1; then
    echo "postgres: running as root needs the 'postgres' user (the Debian package creates it)" >&2
    exit 1
fi

# Idempotent: the recorded cluster still answers -> keep it.
if [ -f "$state_file" ] && [ -f "$url_file" ]; then
    dir=$(cat "$state_file")
    port=$(cat "$dir/port" 2>/dev/null || echo "")
    if [ -n "$port" ] && "$bindir/pg_isready" -q -h 127.0.0.1 -p "$port" -t 5; then
        echo "postgres: already running on 127.0.0.1:$port (URL in $url_file)"
        exit 0
    fi
fi
stop_cluster   # a stale record: clean up before starting afresh

dir=$(mktemp -d "${TMPDIR:-/tmp}/tuner-pg.XXXXXX")
chmod 700 "$dir"
mkdir "$dir/data" "$dir/sock"
if [ "$(id -u)" = 0 ]; then chown -R postgres: "$dir"; fi
echo "$dir" > "$state_file"

# The superuser connects only over the private socket dir (trust); TCP needs the role's password.
as_owner "$bindir/initdb" -D "$dir/data" -U postgres --auth-local=trust --auth-host=scram-sha-256 \
    -E UTF8 --no-locale >"$dir/initdb.log" 2>&1 || {
    echo "postgres: initdb failed; log: $dir/initdb.log" >&2; tail -5 "$dir/initdb.log" >&2; exit 1; }

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

started=
for _ in 1 2 3 4 5; do   # the free port may be taken before the server binds it: try another
    port=$(free_port)
    if as_owner "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
        -o "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$dir/sock -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" \
        start >/dev/null 2>&1; then
        started=1; break
    fi
done
if [ -z "$started" ]; then
    echo "postgres: the server did not start; log: $dir/server.log" >&2
    tail -5 "$dir/server.log" >&2 || true
    exit 1
fi
echo "$port" > "$dir/port"

role=tuner
db=tuner
password=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
as_owner "$bindir/psql" -q -X -v ON_ERROR_STOP=1 -h "$dir/sock" -p "$port" -U postgres -d postgres >/dev/null <<SQL
CREATE ROLE $role LOGIN CREATEDB PASSWORD '$password';
CREATE DATABASE $db OWNER $role;
SQL

( umask 077; echo "postgresql://$role:$password@127.0.0.1:$port/$db" > "$url_file" )
echo "postgres: running on 127.0.0.1:$port, database $db, role $role (URL in $url_file)"
