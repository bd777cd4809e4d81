# shellcheck shell=bash
# Test services for the integration suites, all on loopback.
#
# Source it (`source .ci/services.sh`), don't run it: it exports into the calling
# shell what `npm test` (and `npm start` on the production stack) reads:
#   TEST_POSTGRES_URL      postgres://tiergraph:tiergraph@127.0.0.1:<port>/tiergraph_test
#   TEST_REDIS_URL         redis://127.0.0.1:6379/15
#   NEO4J_URI, NEO4J_USER, NEO4J_PASSWORD
#                          bolt://127.0.0.1:7687; Neo4j 5.26 (community) from neo4j-harness,
#                          started by the small launcher in .ci/neo4j/, auth on
#   TEST_NEO4J_LAUNCHER    that launcher's build directory (its jar and classpath.txt), with
#                          which the bulk-load suite runs neo4j-admin's importer and serves
#                          what it wrote on a server of its own
#   MONGODB_URI            mongodb://127.0.0.1:27017/tiergraph_test; mongo-java-server
#                          in memory, a MongoDB-wire stand-in (see the README)
#   STORAGE_EMULATOR_HOST  http://127.0.0.1:4443; fake-gcs-server, in memory
#   GCS_BUCKET             tiergraph-test, created when the emulator starts
#   GCS_KEY_FILE, GCS_PROJECT_ID
#                          a throwaway service-account key that signs download links
#   SCHEMATHESIS_BIN       schemathesis (pinned, from PyPI) in a virtual environment
#                          in the cache, for the generated-request suite
# and installs Debian's chromium (/usr/bin/chromium) for the browser tests.
#
# As root with apt it installs the Debian packages when missing; the launchers of
# Neo4j and of the MongoDB-wire server (.ci/neo4j, .ci/mongo) are built with Maven
# and fake-gcs-server with Go, into the user's cache directory
# (${XDG_CACHE_HOME:-~/.cache}/tiergraph-ci), so a machine downloads them once. It
# starts the servers that do not answer, daemonised so that they outlive this
# script, with logs under ${TMPDIR:-/tmp}/tiergraph-services; it is safe to source
# again while they run (nothing is rebuilt or restarted). A setting already present
# in the environment is kept and its service left alone, so a developer can point
# the tests at a server of their own.
#
# The work runs in a subshell with strict error handling of its own, so sourcing
# this from an interactive shell changes none of that shell's options; only the
# exports reach the caller. Every wait is bounded. Returns non-zero when a service
# could not be made to answer, with the reason on stderr.

_tg_services() (
  set -euo pipefail

  local pg_role=tiergraph pg_password=tiergraph pg_db=tiergraph_test
  local redis_port=6379 redis_db=15
  local out=$1      # file that receives the export lines for the caller
  local ci_dir=$2   # this script's directory (.ci of the checkout)
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

  port_answers() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

  local want_pg=1 want_redis=1 want_neo4j=1 want_mongo=1 want_gcs=1
  [ -z "${TEST_POSTGRES_URL:-}" ] || want_pg=0
  [ -z "${TEST_REDIS_URL:-}" ] || want_redis=0
  [ -z "${NEO4J_URI:-}" ] || want_neo4j=0
  [ -z "${MONGODB_URI:-}" ] || want_mongo=0
  [ -z "${STORAGE_EMULATOR_HOST:-}" ] || want_gcs=0
  # A server already answering on its port is reused, so nothing needs building.
  local neo4j_port=7687 mongo_port=27017 gcs_port=4443
  [ "$want_neo4j" = 0 ] || ! port_answers "$neo4j_port" || want_neo4j=reuse
  [ "$want_mongo" = 0 ] || ! port_answers "$mongo_port" || want_mongo=reuse
  [ "$want_gcs" = 0 ] || ! port_answers "$gcs_port" || want_gcs=reuse

  # --- install what is missing (one apt transaction for both) ----------------
  local missing=()
  [ "$want_pg" = 0 ] || have_pg_server || missing+=(postgresql)
  [ "$want_redis" = 0 ] || have_redis_server || missing+=(redis-server)
  if [ "$want_neo4j" = 1 ]; then
    command -v java >/dev/null || missing+=(openjdk-17-jdk-headless)
    command -v mvn >/dev/null || missing+=(maven)
  fi
  if [ "$want_mongo" = 1 ]; then
    command -v java >/dev/null || missing+=(openjdk-17-jdk-headless)
    command -v mvn >/dev/null || missing+=(maven)
  fi
  [ "$want_gcs" = 0 ] || command -v go >/dev/null || missing+=(golang-go)
  # schemathesis runs in a virtual environment of its own, which Debian's python3 makes with python3-venv.
  [ -n "${SCHEMATHESIS_BIN:-}" ] || python3 -c 'import ensurepip' >/dev/null 2>&1 || missing+=(python3-venv)
  # The browser tests drive Debian's chromium through playwright-core (no browser download).
  [ -n "${CHROMIUM_PATH:-}" ] || [ -x /usr/bin/chromium ] || missing+=(chromium)
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

  # --- Builds, cached per version under the user's cache directory -----------
  local cache=${XDG_CACHE_HOME:-$HOME/.cache}/tiergraph-ci
  mkdir -p "$cache"
  local gcs_version=v1.55.1
  # Go's module and build caches live there too, so CI's downloads survive the run.
  local go_env=(env "GOPATH=$cache/go" "GOCACHE=$cache/go-build" GOFLAGS=-modcacherw GOTOOLCHAIN=local)

  # Starts "$@" in a session of its own, detached from this shell, logging to $1.
  daemon() {
    local log=$1
    shift
    nohup setsid "$@" >"$log" 2>&1 </dev/null &
    echo $!
  }
  # Waits at most $2 seconds for the port $1 to accept connections while the process
  # $3 lives; on failure prints the end of the log $4.
  wait_port() {
    local port=$1 seconds=$2 pid=$3 log=$4 tries=$(($2 * 5))
    while ! port_answers "$port"; do
      if ! kill -0 "$pid" 2>/dev/null; then
        tail -n 40 "$log" >&2
        say "the process exited before 127.0.0.1:$port answered (log: $log)"
        return 1
      fi
      tries=$((tries - 1))
      if [ "$tries" -le 0 ]; then
        tail -n 40 "$log" >&2
        say "127.0.0.1:$port did not answer within $seconds s (log: $log)"
        return 1
      fi
      sleep 0.2
    done
  }

  # Builds the Java launcher in .ci/$1 (a pom.xml and one class) once per content,
  # into the cache, with Maven's repository there too; prints the build directory.
  java_launcher() {
    local name=$1 src=$ci_dir/$1 hash dir
    command -v java >/dev/null && command -v mvn >/dev/null || { say "$name needs java (17) and mvn on PATH"; return 1; }
    hash=$(cat "$src/pom.xml" "$src"/src/main/java/tiergraph/ci/*.java | sha256sum | cut -c1-16)
    dir=$cache/$name-launcher-$hash
    if [ ! -s "$dir/classpath.txt" ]; then
      say "building the $name launcher with Maven (log: $log_dir/$name-build.log)"
      timeout 1200 mvn -B -q -f "$src/pom.xml" -Dmaven.repo.local="$cache/m2" \
        -Dtiergraph.build.dir="$dir" package >"$log_dir/$name-build.log" 2>&1 ||
        { tail -n 40 "$log_dir/$name-build.log" >&2; say "Maven failed (log: $log_dir/$name-build.log)"; return 1; }
    fi
    echo "$dir"
  }

  # --- Neo4j 5.26 (neo4j-harness, Bolt only) -----------------------------------
  local build=
  if [ "$want_neo4j" = 1 ]; then
    build=$(java_launcher neo4j) || fail "could not build the Neo4j launcher"
    # A fresh, empty database each start: the data of a previous server is dropped.
    rm -rf "$log_dir/neo4j"
    # Its own temporary directory: the harness leaves a logging configuration in it at every start.
    mkdir -p "$log_dir/neo4j"
    say "starting Neo4j on 127.0.0.1:$neo4j_port"
    local pid
    pid=$(NEO4J_PASSWORD=tiergraph daemon "$log_dir/neo4j.log" java -Xms256m -Xmx1g -XX:+UseG1GC \
      "-Djava.io.tmpdir=$log_dir/neo4j" \
      --add-opens=java.base/java.nio=ALL-UNNAMED --add-opens=java.base/java.io=ALL-UNNAMED \
      --add-opens=java.base/sun.nio.ch=ALL-UNNAMED -Dio.netty.tryReflectionSetAccessible=true \
      -cp "$build/neo4j-test-server-1.jar:$(cat "$build/classpath.txt")" \
      tiergraph.ci.Neo4jTestServer "$log_dir/neo4j" "$neo4j_port")
    echo "$pid" >"$log_dir/neo4j.pid"
    wait_port "$neo4j_port" 180 "$pid" "$log_dir/neo4j.log" || fail "Neo4j did not start"
    # Bolt listens before the launcher has set the password: it says when it has.
    local waited=0
    until grep -q "neo4j: ready" "$log_dir/neo4j.log"; do
      [ "$waited" -lt 300 ] && kill -0 "$pid" 2>/dev/null ||
        { tail -n 40 "$log_dir/neo4j.log" >&2; fail "Neo4j did not become ready"; }
      sleep 0.2
      waited=$((waited + 1))
    done
  fi
  if [ "$want_neo4j" = reuse ] && [ -z "${TEST_NEO4J_LAUNCHER:-}" ]; then
    build=$(java_launcher neo4j) || fail "could not build the Neo4j launcher"
  fi
  if [ "$want_neo4j" != 0 ] && [ -z "${TEST_NEO4J_LAUNCHER:-}" ]; then
    echo "export TEST_NEO4J_LAUNCHER=$build" >>"$out"
  fi
  if [ "$want_neo4j" != 0 ]; then
    # The password the launcher set (a server reused from before it did so has auth off, and takes any).
    {
      echo "export NEO4J_URI=bolt://127.0.0.1:$neo4j_port"
      echo "export NEO4J_USER=neo4j"
      echo "export NEO4J_PASSWORD=tiergraph"
    } >>"$out"
  fi

  # --- mongo-java-server (MongoDB wire protocol, in memory) -------------------
  # FerretDB 1.24 was tried first and dropped: its findAndModify is a read followed
  # by a separate write, so two workers can both lock one Agenda job (a job of the
  # "each runs exactly once" test ran twice under load). mongo-java-server
  # serialises findAndModify per collection (though its reply may show a later
  # concurrent change; see MongoRunStore.create).
  if [ "$want_mongo" = 1 ]; then
    local mongo_build
    mongo_build=$(java_launcher mongo) || fail "could not build the MongoDB-wire launcher"
    say "starting mongo-java-server on 127.0.0.1:$mongo_port"
    local pid
    pid=$(daemon "$log_dir/mongo.log" java -Xms64m -Xmx512m \
      -cp "$mongo_build/mongo-test-server-1.jar:$(cat "$mongo_build/classpath.txt")" \
      tiergraph.ci.MongoTestServer "$mongo_port")
    echo "$pid" >"$log_dir/mongo.pid"
    wait_port "$mongo_port" 60 "$pid" "$log_dir/mongo.log" || fail "mongo-java-server did not start"
  fi
  [ "$want_mongo" = 0 ] || echo "export MONGODB_URI=mongodb://127.0.0.1:$mongo_port/tiergraph_test" >>"$out"

  # --- fake-gcs-server (Cloud Storage emulator, in memory) --------------------
  local bucket=tiergraph-test
  if [ "$want_gcs" = 1 ]; then
    command -v go >/dev/null || fail "fake-gcs-server is built with Go, and go is not on PATH"
    local gdir=$cache/fake-gcs-server-$gcs_version
    if [ ! -x "$gdir/fake-gcs-server" ]; then
      say "building fake-gcs-server $gcs_version with Go (log: $log_dir/fake-gcs-build.log)"
      (cd / && timeout 900 "${go_env[@]}" GOBIN="$gdir" go install "github.com/fsouza/fake-gcs-server@$gcs_version") \
        >"$log_dir/fake-gcs-build.log" 2>&1 ||
        { tail -n 40 "$log_dir/fake-gcs-build.log" >&2; fail "could not build fake-gcs-server (log: $log_dir/fake-gcs-build.log)"; }
    fi
    # Each directory under -data becomes a bucket at start.
    rm -rf "$log_dir/fake-gcs-data"
    mkdir -p "$log_dir/fake-gcs-data/$bucket"
    say "starting fake-gcs-server $gcs_version on 127.0.0.1:$gcs_port (bucket $bucket)"
    local pid
    pid=$(daemon "$log_dir/fake-gcs.log" "$gdir/fake-gcs-server" -backend memory -data "$log_dir/fake-gcs-data" \
      -scheme http -host 127.0.0.1 -port "$gcs_port" -public-host "127.0.0.1:$gcs_port" \
      -external-url "http://127.0.0.1:$gcs_port" -log-level warn)
    echo "$pid" >"$log_dir/fake-gcs.pid"
    wait_port "$gcs_port" 60 "$pid" "$log_dir/fake-gcs.log" || fail "fake-gcs-server did not start"
  fi
  # --- schemathesis: generated requests against /openapi.json ----------------
  # From PyPI with pip, into a virtual environment in the cache, pinned; reinstalled
  # only when the version there is not the pinned one.
  if [ -z "${SCHEMATHESIS_BIN:-}" ]; then
    local st_version=4.32.5 st_venv=$cache/schemathesis-venv
    if [ "$("$st_venv/bin/st" --version 2>/dev/null | awk '{ print $NF }')" != "$st_version" ]; then
      say "installing schemathesis $st_version from PyPI into $st_venv"
      rm -rf "$st_venv"
      { python3 -m venv "$st_venv" && "$st_venv/bin/pip" install -q --disable-pip-version-check \
        "schemathesis==$st_version"; } >"$log_dir/schemathesis-install.log" 2>&1 ||
        { tail -n 20 "$log_dir/schemathesis-install.log" >&2; fail "could not install schemathesis (log: $log_dir/schemathesis-install.log)"; }
    fi
    echo "export SCHEMATHESIS_BIN=$st_venv/bin/st" >>"$out"
  fi

  if [ "$want_gcs" != 0 ]; then
    echo "export STORAGE_EMULATOR_HOST=http://127.0.0.1:$gcs_port" >>"$out"
    [ -n "${GCS_BUCKET:-}" ] || echo "export GCS_BUCKET=$bucket" >>"$out"
    # Download links are V4-signed with a service-account key even on the emulator
    # (which does not check them): a throwaway key, made once, lets BLOB_STORE=gcs
    # sign without Google credentials.
    local key=$log_dir/fake-gcs-signing-key.json
    if [ -z "${GCS_KEY_FILE:-}" ]; then
      if [ ! -s "$key" ] && command -v node >/dev/null; then
        node -e '
          const { generateKeyPairSync } = require("node:crypto");
          const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048,
            privateKeyEncoding: { type: "pkcs8", format: "pem" }, publicKeyEncoding: { type: "spki", format: "pem" } });
          require("node:fs").writeFileSync(process.argv[1], JSON.stringify({ type: "service_account",
            project_id: "tiergraph-test", private_key_id: "emulator", private_key: privateKey,
            client_email: "exports@tiergraph-test.iam.gserviceaccount.com", client_id: "0",
            token_uri: "http://127.0.0.1:9/token" }), { mode: 0o600 });' "$key" || fail "could not write $key"
      fi
      if [ -s "$key" ]; then
        echo "export GCS_KEY_FILE=$key" >>"$out"
        [ -n "${GCS_PROJECT_ID:-}" ] || echo "export GCS_PROJECT_ID=tiergraph-test" >>"$out"
      fi
    fi
  fi
)

_tg_services_main() {
  local exports status=0 started=$SECONDS
  exports=$(mktemp)
  _tg_services "$exports" "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)" || status=$?
  if [ "$status" -eq 0 ]; then
    # shellcheck disable=SC1090
    source "$exports"
    echo "services: ready in $((SECONDS - started)) s" \
      "(TEST_POSTGRES_URL=${TEST_POSTGRES_URL:-unset}, TEST_REDIS_URL=${TEST_REDIS_URL:-unset}," \
      "NEO4J_URI=${NEO4J_URI:-unset}, MONGODB_URI=${MONGODB_URI:-unset}," \
      "STORAGE_EMULATOR_HOST=${STORAGE_EMULATOR_HOST:-unset}, GCS_BUCKET=${GCS_BUCKET:-unset})" >&2
  fi
  rm -f "$exports"
  return "$status"
}

_tg_services_main
