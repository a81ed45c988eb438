# shellcheck shell=bash
# Warehouse part of scripts/stack.sh (sourced by it; `up --with warehouse`): a Kafka Connect worker in distributed
# mode (the Kafka jars the stack already fetches) with Apicurio's Avro converter, Debezium's JDBC sink and the
# stack's own ArraysOfRecordsToJson transform, and a throwaway PostgreSQL from Debian's packages. Loopback only,
# everything under .stack/ (connect/, postgres/). Versions: see ../../docs/consuming.md and infra-notes §7.

CONNECT_PORT="${STACK_CONNECT_PORT:-18083}"
POSTGRES_PORT="${STACK_POSTGRES_PORT:-15432}"
DEBEZIUM_JDBC_VERSION=3.3.1.Final        # built against Kafka 4.1.0, Java 17 (3.6.x bundles Kafka 4.3 jars)
APICURIO_CONVERTER_VERSION=2.6.13.Final  # v2 API, still served by Registry 3.3.x; no 3.x converter on Central
CONNECT_DIR="$STACK/connect"
POSTGRES_DIR="$STACK/postgres"
CONNECT_URL="http://$HOST:$CONNECT_PORT"
WAREHOUSE_DB=gamedata
WAREHOUSE_USER=gamedata
WAREHOUSE_URL="postgresql://$WAREHOUSE_USER:$WAREHOUSE_USER@$HOST:$POSTGRES_PORT/$WAREHOUSE_DB"
CONNECT_WAIT_S="${STACK_CONNECT_WAIT_S:-180}"
POSTGRES_WAIT_S="${STACK_POSTGRES_WAIT_S:-60}"
CONNECT_GROUP="${STACK_CONNECT_GROUP:-gamedata-connect}"
POSTGRES_ALT_DIR="/tmp/gamedata-pg$STACK"   # see postgres_home

postgres_log() { if [[ -f "$POSTGRES_ALT_DIR/postgres.log" ]]; then echo "$POSTGRES_ALT_DIR/postgres.log"; else echo "$POSTGRES_DIR/postgres.log"; fi; }

print_warehouse_env() {
  printf 'export CONNECT_URL=%s\n' "$CONNECT_URL"
  printf 'export WAREHOUSE_URL=%s\n' "$WAREHOUSE_URL"
}

# GET /connectors answers once the herder has started (distributed: after it joined its group).
connect_answers() { curl -fsS -m 3 -o /dev/null "$CONNECT_URL/connectors" 2>/dev/null; }
postgres_answers() {
  PGCONNECT_TIMEOUT=3 psql -X -q -t -A "$WAREHOUSE_URL" -c 'select 1' 2>/dev/null | grep -qx 1
}

pg_bin_dir() {
  local d
  d="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)"
  [[ -n "$d" && -x "$d/initdb" ]] && printf '%s' "$d"
}

# Debian's postgresql package (server binaries under /usr/lib/postgresql/<major>/bin; no cluster is used).
install_postgres() {
  if [[ -z "$(pg_bin_dir)" ]] || ! command -v psql >/dev/null 2>&1; then
    local sudo=""
    [[ "$(id -u)" == 0 ]] || sudo="sudo"
    log "postgres: apt-get install postgresql"
    $sudo apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends postgresql >&2 \
      || die "postgres: could not install Debian's postgresql package"
  fi
  [[ -n "$(pg_bin_dir)" ]] || die "postgres: no /usr/lib/postgresql/*/bin/initdb after installing postgresql"
}

# Runs a PostgreSQL binary as the data directory's owner: initdb refuses root, so root runs it as `postgres`.
as_pg_owner() {
  if [[ "$(id -u)" == 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi
}

# The data directory: .stack/postgres/data, unless root runs us in a folder the `postgres` user cannot reach (a
# checkout under /root): then /tmp/gamedata-pg<stack folder>/, whose path still names the stack folder (owned_pid).
postgres_home() {
  if [[ "$(id -u)" == 0 ]]; then
    mkdir -p "$POSTGRES_DIR" && chown postgres: "$POSTGRES_DIR"
    if ! runuser -u postgres -- test -w "$POSTGRES_DIR" 2>/dev/null; then
      local alt="$POSTGRES_ALT_DIR"
      mkdir -p "$alt" && chmod 755 /tmp/gamedata-pg && chown postgres: "$alt"
      local d="$alt"; while [[ "$d" != /tmp/gamedata-pg && "$d" != / ]]; do chmod o+x "$d"; d="$(dirname "$d")"; done
      printf '%s' "$alt"; return
    fi
  fi
  mkdir -p "$POSTGRES_DIR"
  printf '%s' "$POSTGRES_DIR"
}

# Settings written into the data directory before each start: none here (trust on loopback, a throwaway database);
# the secure stack (scripts/stack/secure.sh) writes its pg_hba.conf. args: data dir
postgres_configure() { :; }

start_postgres() {
  local bin home data i pid
  bin="$(pg_bin_dir)"
  home="$(postgres_home)"
  data="$home/data"
  [[ "$home" == "$POSTGRES_DIR" ]] || log "postgres: the postgres user cannot reach $POSTGRES_DIR; data in $home"
  if [[ ! -f "$data/PG_VERSION" ]]; then
    log "postgres: initdb $data"
    rm -rf "$data"
    as_pg_owner "$bin/initdb" -A trust -U postgres -E UTF8 --locale=C.UTF-8 -D "$data" >"$POSTGRES_DIR/initdb.log" 2>&1 \
      || as_pg_owner "$bin/initdb" -A trust -U postgres -E UTF8 --no-locale -D "$data" >"$POSTGRES_DIR/initdb.log" 2>&1 \
      || { log_tail initdb "$POSTGRES_DIR/initdb.log"; die "postgres: initdb failed"; }
  fi
  postgres_configure "$data"
  log "postgres: starting $("$bin/postgres" --version | awk '{print $3}') on $HOST:$POSTGRES_PORT"
  rm -f "$RUN_DIR/postgres.pid"
  # throwaway: no fsync; sockets in the data dir (not /run/postgresql, which may not exist)
  as_pg_owner "$bin/pg_ctl" -D "$data" -l "$home/postgres.log" -s \
    -o "-p $POSTGRES_PORT -k $data -c listen_addresses=$HOST -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" \
    start 9>&- >&2 || { log_tail postgres "$home/postgres.log"; die "postgres: pg_ctl start failed"; }
  for ((i = 0; i < 100; i++)); do
    pid="$(head -n 1 "$data/postmaster.pid" 2>/dev/null || true)"
    [[ "$pid" =~ ^[0-9]+$ ]] && { printf '%s' "$pid" >"$RUN_DIR/postgres.pid"; return 0; }
    sleep 0.1
  done
  die "postgres: no postmaster.pid after 10 s (see $home/postgres.log)"
}

# The role and database of WAREHOUSE_URL (idempotent; trust authentication on loopback, a throwaway database).
postgres_setup() {
  local admin="postgresql://postgres@$HOST:$POSTGRES_PORT/postgres" start=$SECONDS
  until psql -X -q -t -A "$admin" -c 'select 1' >/dev/null 2>&1; do
    ((SECONDS - start < POSTGRES_WAIT_S)) || { log_tail postgres "$(postgres_log)"; die "postgres: no answer"; }
    sleep 0.3
  done
  psql -X -q "$admin" -v ON_ERROR_STOP=1 >&2 <<SQL || die "postgres: could not create role/database $WAREHOUSE_DB"
SELECT 'CREATE ROLE $WAREHOUSE_USER LOGIN SUPERUSER PASSWORD ''$WAREHOUSE_USER'''
  WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$WAREHOUSE_USER') \gexec
SELECT 'CREATE DATABASE $WAREHOUSE_DB OWNER $WAREHOUSE_USER'
  WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = '$WAREHOUSE_DB') \gexec
SQL
}

install_connect() {
  mkdir -p "$CONNECT_DIR/plugins"
  # Connect runs from the broker's jars (connect-runtime is in kafka-tools); fetch them when Kafka was reused.
  [[ -f "$KAFKA_DIR/libs/.complete-$KAFKA_VERSION" ]] || install_kafka
  local sink="$CONNECT_DIR/plugins/debezium-connector-jdbc" conv="$CONNECT_DIR/plugins/apicurio-converter"
  if [[ ! -f "$sink/.complete-$DEBEZIUM_JDBC_VERSION" ]]; then
    need mvn "install Maven (apt-get install -y maven)"
    log "connect: fetching Debezium JDBC sink $DEBEZIUM_JDBC_VERSION (Maven; cached in ~/.m2)"
    rm -rf "$sink" "$CONNECT_DIR/dist" && mkdir -p "$sink"
    mvn -B -q -Dstyle.color=never "$DEP_PLUGIN:copy" \
      "-Dartifact=io.debezium:debezium-connector-jdbc:$DEBEZIUM_JDBC_VERSION:tar.gz:plugin" \
      -DoutputDirectory="$CONNECT_DIR/dist" >&2 || die "connect: Maven could not fetch debezium-connector-jdbc $DEBEZIUM_JDBC_VERSION"
    tar -xzf "$CONNECT_DIR/dist/debezium-connector-jdbc-$DEBEZIUM_JDBC_VERSION-plugin.tar.gz" -C "$sink" --strip-components=1
    rm -rf "$CONNECT_DIR/dist"
    touch "$sink/.complete-$DEBEZIUM_JDBC_VERSION"
  fi
  if [[ ! -f "$conv/.complete-$APICURIO_CONVERTER_VERSION" ]]; then
    need mvn "install Maven (apt-get install -y maven)"
    log "connect: fetching Apicurio converter $APICURIO_CONVERTER_VERSION (Maven; cached in ~/.m2)"
    rm -rf "$conv" "$CONNECT_DIR/converter-pom" && mkdir -p "$CONNECT_DIR/converter-pom"
    cat >"$CONNECT_DIR/converter-pom/pom.xml" <<POM
<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.stack</groupId><artifactId>connect-converter</artifactId><version>1</version><packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>io.apicurio</groupId><artifactId>apicurio-registry-utils-converter</artifactId><version>$APICURIO_CONVERTER_VERSION</version></dependency>
  </dependencies>
</project>
POM
    # Kafka's own jars and SLF4J come from the worker's classpath (two copies clash)
    (cd "$CONNECT_DIR/converter-pom" && mvn -B -q -Dstyle.color=never "$DEP_PLUGIN:copy-dependencies" -DincludeScope=runtime \
      -DexcludeGroupIds=org.apache.kafka -DexcludeArtifactIds=slf4j-api -DoutputDirectory="$conv" >&2) \
      || die "connect: Maven could not resolve apicurio-registry-utils-converter $APICURIO_CONVERTER_VERSION"
    touch "$conv/.complete-$APICURIO_CONVERTER_VERSION"
  fi
  install_connect_transform
}

# The stack's own transform (scripts/stack/connect/*.java), compiled against the worker's connect-api when its
# source changed. Needs a JDK (javac).
install_connect_transform() {
  local src="$ROOT/scripts/stack/connect" out="$CONNECT_DIR/plugins/gamedata-transforms" sum javac
  sum="$(cat "$src"/*.java | sha256sum | cut -c1-16)"
  [[ -f "$out/.complete-$sum" ]] && return 0
  javac="$(command -v javac || true)"
  if [[ -z "$javac" ]]; then
    local sudo=""
    [[ "$(id -u)" == 0 ]] || sudo="sudo"
    log "connect: no javac; apt-get install openjdk-17-jdk-headless"
    $sudo apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends openjdk-17-jdk-headless >&2 \
      || die "connect: could not install a JDK (javac) for the stack's transform"
    javac="$(command -v javac)"
  fi
  log "connect: compiling the stack's transform ($src)"
  rm -rf "$out" "$CONNECT_DIR/transform-build" && mkdir -p "$out" "$CONNECT_DIR/transform-build/META-INF/services"
  "$javac" --release 17 -nowarn -d "$CONNECT_DIR/transform-build" -cp "$KAFKA_DIR/libs/*" "$src"/*.java >&2 \
    || die "connect: javac failed on $src"
  printf 'gamedata.connect.ArraysOfRecordsToJson$Value\n' \
    >"$CONNECT_DIR/transform-build/META-INF/services/org.apache.kafka.connect.transforms.Transformation"
  (cd "$CONNECT_DIR/transform-build" && "$(dirname "$(readlink -f "$javac")")/jar" cf "$out/gamedata-transforms.jar" .) \
    || die "connect: could not package the transform"
  rm -rf "$CONNECT_DIR/transform-build"
  touch "$out/.complete-$sum"
}

write_connect_config() {
  cat >"$CONNECT_DIR/worker.properties" <<PROPS
# Written by scripts/stack.sh (regenerated on every up --with warehouse).
bootstrap.servers=$KAFKA_URL
group.id=$CONNECT_GROUP
listeners=http://$HOST:$CONNECT_PORT
rest.advertised.host.name=$HOST
rest.advertised.port=$CONNECT_PORT
config.storage.topic=_$CONNECT_GROUP.configs
offset.storage.topic=_$CONNECT_GROUP.offsets
status.storage.topic=_$CONNECT_GROUP.status
config.storage.replication.factor=1
offset.storage.replication.factor=1
status.storage.replication.factor=1
offset.storage.partitions=5
status.storage.partitions=1
offset.flush.interval.ms=2000
plugin.path=$CONNECT_DIR/plugins
# the Apicurio converter jar has no ServiceLoader manifest
plugin.discovery=hybrid_warn
# connectors may set consumer.override.* (isolation.level=read_committed)
# connectors' secrets through config providers, never inline: \${file:<path>:<key>} (GAMEDATA_CONNECT_SECRETS_FILE,
# written by \`gamedata connect secrets-file\`) or \${env:<NAME>}
config.providers=file,env
config.providers.file.class=org.apache.kafka.common.config.provider.FileConfigProvider
config.providers.env.class=org.apache.kafka.common.config.provider.EnvVarConfigProvider
connector.client.config.override.policy=All
key.converter=org.apache.kafka.connect.storage.StringConverter
value.converter=io.apicurio.registry.utils.converter.AvroConverter
value.converter.apicurio.registry.url=$REGISTRY_ROOT/apis/registry/v2
value.converter.apicurio.registry.as-confluent=true
value.converter.apicurio.registry.use-id=contentId
value.converter.apicurio.registry.headers.enabled=false
PROPS
  cat >"$CONNECT_DIR/log4j2.properties" <<'PROPS'
status = warn
appender.console.type = Console
appender.console.name = STDOUT
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = info
rootLogger.appenderRef.stdout.ref = STDOUT
logger.reflections.name = org.reflections
logger.reflections.level = error
logger.hibernate.name = org.hibernate
logger.hibernate.level = warn
logger.c3p0.name = com.mchange
logger.c3p0.level = warn
PROPS
}

start_connect() {
  mkdir -p "$CONNECT_DIR/logs"
  write_connect_config
  log "connect: starting Kafka Connect $KAFKA_VERSION (distributed, group $CONNECT_GROUP) on $CONNECT_URL"
  start_detached "$RUN_DIR/connect.pid" "$CONNECT_DIR/connect.out" java -Xms256m -Xmx768m -XX:+UseG1GC \
    -XX:MaxGCPauseMillis=20 -Djava.awt.headless=true \
    -Dlog4j2.configurationFile="$CONNECT_DIR/log4j2.properties" -Dkafka.logs.dir="$CONNECT_DIR/logs" \
    -cp "$KAFKA_DIR/libs/*" org.apache.kafka.connect.cli.ConnectDistributed "$CONNECT_DIR/worker.properties"
}

# Called by cmd_up after the core services answer. Kafka and the registry must answer (Connect needs both).
warehouse_up() {
  local connect postgres
  install_postgres   # no-op when Debian's postgresql (server and psql) is there; the probe below needs psql
  postgres="$(plan_service postgres postgres_answers "$POSTGRES_PORT" postgres "$HOST:$POSTGRES_PORT")"
  [[ "$postgres" == reuse ]] || UP_STARTED+=(postgres)   # stopped again if `up --secure` fails (scripts/stack/secure.sh)
  [[ "$postgres" != start ]] || { install_postgres; start_postgres; }
  connect="$(plan_service connect connect_answers "$CONNECT_PORT" connect "$CONNECT_URL")"
  [[ "$connect" == reuse ]] || UP_STARTED+=(connect)
  [[ "$connect" != start ]] || { install_connect; start_connect; }
  [[ "$postgres" == reuse ]] || { postgres_setup; wait_until postgres "$POSTGRES_WAIT_S" postgres_answers "$(postgres_log)" postgres; }
  [[ "$connect" == reuse ]] || wait_until connect "$CONNECT_WAIT_S" connect_answers "$CONNECT_DIR/connect.out" connect
}

# Stops Connect first (it holds database connections), then PostgreSQL (SIGINT = fast shutdown).
warehouse_down() {
  local pid any=1
  if pid="$(owned_pid connect)"; then stop_pid connect "$pid"; any=0; fi
  if pid="$(owned_pid postgres)"; then
    kill -INT "$pid" 2>/dev/null || true
    stop_pid postgres "$pid"; any=0
  fi
  for svc in connect:$CONNECT_PORT postgres:$POSTGRES_PORT; do
    port_open "${svc#*:}" && log "${svc%%:*}: port ${svc#*:} still answers (not started by this stack: left alone)"
  done
  return $any
}

# args: required(0|1). Prints one line per service (without --with warehouse: only when one answers); returns 1
# when required and one is down.
warehouse_status() {
  local ok=0 pid
  [[ "$1" == 1 ]] || port_open "$CONNECT_PORT" || port_open "$POSTGRES_PORT" || return 0
  describe() { if pid="$(owned_pid "$1")"; then echo "started by this stack, pid $pid"; else echo "not started by this stack"; fi; }
  if connect_answers; then log "connect:  up   $CONNECT_URL ($(describe connect))"; else log "connect:  down $CONNECT_URL"; ok=1; fi
  if postgres_answers; then log "postgres: up   $WAREHOUSE_URL ($(describe postgres))"; else log "postgres: down $WAREHOUSE_URL"; ok=1; fi
  [[ "$1" == 1 ]] && return $ok
  return 0
}
