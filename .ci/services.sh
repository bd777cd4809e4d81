# shellcheck shell=bash
# Test services for the integration suites: PostgreSQL and Redis on loopback.
#
# Source it (`source .ci/services.sh`), don't run it: it exports
#   TEST_POSTGRES_URL  postgres://tiergraph:tiergraph@127.0.0.1:<port>/tiergraph_test
#   TEST_REDIS_URL     redis://127.0.0.1:6379/15
# into the calling shell so that `npm test` finds the servers. As root with apt it
# installs the Debian packages when missing and starts the servers when they are
# down; it is safe to source again while they run (nothing is reinstalled or
# restarted). A URL already set in the environment is kept and its service left
# alone, so a developer can point the tests at a server of their own.
#
# The work runs in a subshell with strict error handling of its own, so sourcing
# this from an interactive shell changes none of that shell's options; only the
# two exports reach the caller. Returns non-zero when a service could not be made
# to answer, with the reason on stderr.

_tg_services() (
  set -euo pipefail

  local pg_role=tiergraph pg_password=tiergraph pg_db=tiergraph_test
  local redis_port=6379 redis_db=15
  local out=$1 # file that receives the export lines for the caller
  cd / # psql runs as postgres, which may not be allowed into the caller's directory
  local log_dir=${TMPDIR:-/tmp}/tiergraph-services
  mkdir -p "$log_dir"

  say() { echo "services: $*" >&2; }
  fail() {
    say "error: $*"
    exit 1
  }
  # Polls "$@" until it succeeds, for at most $1 seconds (checked every 0.2 s).
  wait_for() {
    local seconds=$1
    shift
    local tries=$((seconds * 5))
    while ! "$@" >/dev/null 2>&1; do
      tries=$((tries - 1))
      [ "$tries" -gt 0 ] || return 1
      sleep 0.2
    done
  }
  am_root() { [ "$(id -u)" -eq 0 ]; }
  have_pg_server() { compgen -G '/usr/lib/postgresql/*/bin/postgres' >/dev/null && command -v pg_ctlcluster >/dev/null; }
  have_redis_server() { command -v redis-server >/dev/null && command -v redis-cli >/dev/null; }
  redis_answers() { [ "$(redis-cli -h 127.0.0.1 -p "$redis_port" ping 2>/dev/null)" = PONG ]; }

  local want_pg=1 want_redis=1
  [ -z "${TEST_POSTGRES_URL:-}" ] || want_pg=0
  [ -z "${TEST_REDIS_URL:-}" ] || want_redis=0

  # --- install what is missing (one apt transaction for both) ----------------
  local missing=()
  [ "$want_pg" = 0 ] || have_pg_server || missing+=(postgresql)
  [ "$want_redis" = 0 ] || have_redis_server || missing+=(redis-server)
  if [ "${#missing[@]}" -gt 0 ]; then
    if am_root && command -v apt-get >/dev/null; then
      say "installing ${missing[*]} with apt"
      local apt_log=$log_dir/apt.log
      local apt=(apt-get install -y -q --no-install-recommends "${missing[@]}")
      # Try the package lists the machine already has first; refresh them only when
      # that fails (a clean image may have none, or stale ones), which saves the
      # update on machines where the lists are current.
      if ! DEBIAN_FRONTEND=noninteractive "${apt[@]}" >"$apt_log" 2>&1; then
        say "install from the current package lists failed; running apt-get update"
        DEBIAN_FRONTEND=noninteractive apt-get update -q >>"$apt_log" 2>&1 || true
        DEBIAN_FRONTEND=noninteractive "${apt[@]}" >>"$apt_log" 2>&1 ||
          { tail -n 30 "$apt_log" >&2; fail "apt-get install ${missing[*]} failed (log: $apt_log)"; }
      fi
    else
      say "not root or no apt-get: cannot install ${missing[*]}; the tests needing them will skip (or fail under CI=true)"
    fi
  fi

  # --- PostgreSQL -------------------------------------------------------------
  if [ "$want_pg" = 1 ] && have_pg_server && am_root; then
    # The newest installed major version, and its cluster "main" (Debian creates it
    # on install; an image built with create_main_cluster=false has none).
    local version
    version=$(basename "$(compgen -G '/usr/lib/postgresql/*/bin/postgres' | sort -V | tail -n 1 | xargs dirname | xargs dirname)")
    if ! pg_lsclusters -h | awk -v v="$version" '$1 == v && $2 == "main" { found = 1 } END { exit !found }'; then
      say "creating PostgreSQL $version cluster main"
      pg_createcluster "$version" main >"$log_dir/pg_createcluster.log" 2>&1 ||
        { cat "$log_dir/pg_createcluster.log" >&2; fail "pg_createcluster failed"; }
    fi
    local conf_dir=/etc/postgresql/$version/main
    # Loopback only: the tests need nothing else, and nothing else should reach it.
    # conf.d is included by Debian's postgresql.conf; the file takes effect at start.
    if [ -d "$conf_dir/conf.d" ] && ! grep -qs "listen_addresses = '127.0.0.1'" "$conf_dir/conf.d/tiergraph-test.conf"; then
      printf "# Written by tiergraph's .ci/services.sh\nlisten_addresses = '127.0.0.1'\n" >"$conf_dir/conf.d/tiergraph-test.conf"
    fi
    local pg_port status
    pg_port=$(pg_lsclusters -h | awk -v v="$version" '$1 == v && $2 == "main" { print $3 }')
    status=$(pg_lsclusters -h | awk -v v="$version" '$1 == v && $2 == "main" { print $4 }')
    if [ "$status" != online ]; then
      say "starting PostgreSQL $version on 127.0.0.1:$pg_port"
      pg_ctlcluster "$version" main start ||
        { tail -n 30 "/var/log/postgresql/postgresql-$version-main.log" >&2 || true; fail "PostgreSQL did not start"; }
    fi
    wait_for 30 pg_isready -q -h 127.0.0.1 -p "$pg_port" || fail "PostgreSQL does not answer on 127.0.0.1:$pg_port"

    # Role and database for the tests. The password is a fixed test value: the server
    # listens on loopback only and holds nothing but test data.
    local psql=(runuser -u postgres -- psql -p "$pg_port" -X -q -v ON_ERROR_STOP=1 -d postgres)
    "${psql[@]}" -c "DO \$\$ BEGIN
        IF EXISTS (SELECT FROM pg_roles WHERE rolname = '$pg_role') THEN
          ALTER ROLE $pg_role LOGIN PASSWORD '$pg_password';
        ELSE
          CREATE ROLE $pg_role LOGIN PASSWORD '$pg_password';
        END IF;
      END \$\$;" || fail "could not create role $pg_role"
    if [ "$("${psql[@]}" -tAc "SELECT 1 FROM pg_database WHERE datname = '$pg_db'")" != 1 ]; then
      "${psql[@]}" -c "CREATE DATABASE $pg_db OWNER $pg_role" || fail "could not create database $pg_db"
    fi
    echo "export TEST_POSTGRES_URL=postgres://$pg_role:$pg_password@127.0.0.1:$pg_port/$pg_db" >>"$out"
  elif [ "$want_pg" = 1 ]; then
    say "PostgreSQL not set up (needs root and the postgresql package); set TEST_POSTGRES_URL to use another server"
  fi

  # --- Redis ------------------------------------------------------------------
  if [ "$want_redis" = 1 ] && have_redis_server; then
    if ! redis_answers; then
      am_root || fail "Redis is not running on 127.0.0.1:$redis_port and only root starts it here"
      say "starting Redis on 127.0.0.1:$redis_port"
      # A throwaway server: no persistence, loopback only, daemonized so it outlives
      # this script. It runs as the package's redis user when there is one.
      local run_as=() data_dir=$log_dir/redis
      mkdir -p "$data_dir"
      if id redis >/dev/null 2>&1; then
        chown redis: "$data_dir"
        run_as=(runuser -u redis --)
      fi
      "${run_as[@]}" redis-server --bind 127.0.0.1 --port "$redis_port" --protected-mode yes \
        --daemonize yes --dir "$data_dir" --logfile "$data_dir/redis.log" --pidfile "$data_dir/redis.pid" \
        --save '' --appendonly no ||
        fail "redis-server did not start (log: $data_dir/redis.log)"
    fi
    wait_for 30 redis_answers || fail "Redis does not answer on 127.0.0.1:$redis_port"
    echo "export TEST_REDIS_URL=redis://127.0.0.1:$redis_port/$redis_db" >>"$out"
  elif [ "$want_redis" = 1 ]; then
    say "Redis not set up (needs the redis-server package); set TEST_REDIS_URL to use another server"
  fi
)

_tg_services_main() {
  local exports status=0 started=$SECONDS
  exports=$(mktemp)
  _tg_services "$exports" || status=$?
  if [ "$status" -eq 0 ]; then
    # shellcheck disable=SC1090
    source "$exports"
    echo "services: ready in $((SECONDS - started)) s" \
      "(TEST_POSTGRES_URL=${TEST_POSTGRES_URL:-unset}, TEST_REDIS_URL=${TEST_REDIS_URL:-unset})" >&2
  fi
  rm -f "$exports"
  return "$status"
}

_tg_services_main
