# shellcheck shell=bash
# Lakehouse part of scripts/stack.sh (sourced by it; `up --with lakehouse`, which implies `--with warehouse`): Apache
# Iceberg's Kafka Connect sink in a Connect worker of its own (its own REST port and group, so adding it never
# restarts the warehouse worker), an Iceberg JDBC catalog in the stack's PostgreSQL (database `lakehouse`), table
# files under .stack/lakehouse/warehouse (HadoopFileIO on file: paths), and a Python venv with PyIceberg (SqlCatalog +
# pyarrow) that reads the tables back. Loopback only. Versions and why: docs/consuming.md, "Lakehouse".

ICEBERG_VERSION=1.10.1        # 1.10.0's iceberg-kafka-connect-events jar is refused by the Maven mirror here
HADOOP_VERSION=3.4.1          # = Iceberg 1.10's hadoop3 version; only hadoop-common and a few of its jars
POSTGRES_JDBC_VERSION=42.7.7
PYICEBERG_VERSION=0.10.0
DUCKDB_VERSION=1.4.4          # SQL over PyIceberg's Arrow scans (its own iceberg extension downloads at run time: not here)
LAKEHOUSE_DIR="$STACK/lakehouse"
LAKEHOUSE_CONNECT_PORT="${STACK_LAKEHOUSE_CONNECT_PORT:-18084}"
LAKEHOUSE_CONNECT_URL="http://$HOST:$LAKEHOUSE_CONNECT_PORT"
LAKEHOUSE_CONNECT_GROUP="${STACK_LAKEHOUSE_CONNECT_GROUP:-gamedata-lakehouse}"
LAKEHOUSE_DB=lakehouse
LAKEHOUSE_CATALOG=gamedata
LAKEHOUSE_WAREHOUSE="file://$LAKEHOUSE_DIR/warehouse"
LAKEHOUSE_VENV="$LAKEHOUSE_DIR/venv"
# A worker per port (a test starts its own beside the default one: STACK_LAKEHOUSE_CONNECT_PORT and _GROUP): its pid
# file, config and log are named after its port.
LAKEHOUSE_PIDNAME="lakehouse-connect-$LAKEHOUSE_CONNECT_PORT"
LAKEHOUSE_LOG="$LAKEHOUSE_DIR/connect-$LAKEHOUSE_CONNECT_PORT.out"
LAKEHOUSE_WORKER_PROPS="$LAKEHOUSE_DIR/worker-$LAKEHOUSE_CONNECT_PORT.properties"
WITH_LAKEHOUSE=""

print_lakehouse_env() {
  printf 'export LAKEHOUSE_CONNECT_URL=%s\n' "$LAKEHOUSE_CONNECT_URL"
  printf 'export ICEBERG_CATALOG_URI=%s\n' \
    "postgresql+psycopg2://$WAREHOUSE_USER:$WAREHOUSE_USER@$HOST:$POSTGRES_PORT/$LAKEHOUSE_DB"
  printf 'export ICEBERG_CATALOG_NAME=%s\n' "$LAKEHOUSE_CATALOG"
  printf 'export ICEBERG_WAREHOUSE=%s\n' "$LAKEHOUSE_WAREHOUSE"
  printf 'export ICEBERG_NAMESPACE=%s\n' "${ICEBERG_NAMESPACE:-gamedata}"
  printf 'export ICEBERG_PYTHON=%s\n' "$LAKEHOUSE_VENV/bin/python"
  printf 'export LAKEHOUSE_CONNECT_PID_FILE=%s\n' "$RUN_DIR/$LAKEHOUSE_PIDNAME.pid"
}

lakehouse_connect_answers() { curl -fsS -m 3 -o /dev/null "$LAKEHOUSE_CONNECT_URL/connectors" 2>/dev/null; }

# What `up --with lakehouse` cannot do without, in one line (empty when nothing is missing).
lakehouse_missing() {
  local missing=()
  command -v mvn >/dev/null 2>&1 || missing+=("mvn (apt-get install -y maven)")
  command -v python3 >/dev/null 2>&1 || missing+=("python3 (apt-get install -y python3)")
  python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || missing+=("python3 venv (apt-get install -y python3-venv)")
  command -v java >/dev/null 2>&1 || missing+=("java 17+")
  ((${#missing[@]} == 0)) || printf 'missing: %s' "$(IFS=';'; echo "${missing[*]}")"
}

# The sink and its runtime: iceberg-kafka-connect + iceberg-parquet (the data-file format) + the JDBC catalog's
# PostgreSQL driver + hadoop-common (HadoopFileIO, and parquet-hadoop's Configuration) with only the jars a local
# file system needs. Kafka's own jars and SLF4J come from the worker (two copies clash).
install_iceberg_sink() {
  local out="$LAKEHOUSE_DIR/plugins/iceberg-sink" pom="$LAKEHOUSE_DIR/sink-pom"
  [[ -f "$out/.complete-$ICEBERG_VERSION-$HADOOP_VERSION" ]] && return 0
  log "lakehouse: fetching Iceberg's Kafka Connect sink $ICEBERG_VERSION + hadoop-common $HADOOP_VERSION (Maven; cached in ~/.m2)"
  rm -rf "$out" "$pom" && mkdir -p "$pom"
  cat >"$pom/pom.xml" <<POM
<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.stack</groupId><artifactId>iceberg-sink</artifactId><version>1</version><packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>org.apache.iceberg</groupId><artifactId>iceberg-kafka-connect</artifactId><version>$ICEBERG_VERSION</version></dependency>
    <dependency><groupId>org.apache.iceberg</groupId><artifactId>iceberg-parquet</artifactId><version>$ICEBERG_VERSION</version></dependency>
    <dependency><groupId>org.postgresql</groupId><artifactId>postgresql</artifactId><version>$POSTGRES_JDBC_VERSION</version></dependency>
    <!-- hadoop-common without its ~100 transitive jars (servers, Kerberos, ZooKeeper, Jersey...): only what
         Configuration, FileSystem/LocalFileSystem and UserGroupInformation load for file: paths -->
    <dependency><groupId>org.apache.hadoop</groupId><artifactId>hadoop-common</artifactId><version>$HADOOP_VERSION</version>
      <exclusions><exclusion><groupId>*</groupId><artifactId>*</artifactId></exclusion></exclusions></dependency>
    <dependency><groupId>org.apache.hadoop</groupId><artifactId>hadoop-auth</artifactId><version>$HADOOP_VERSION</version>
      <exclusions><exclusion><groupId>*</groupId><artifactId>*</artifactId></exclusion></exclusions></dependency>
    <dependency><groupId>org.apache.hadoop.thirdparty</groupId><artifactId>hadoop-shaded-guava</artifactId><version>1.3.0</version></dependency>
    <dependency><groupId>com.fasterxml.woodstox</groupId><artifactId>woodstox-core</artifactId><version>5.4.0</version></dependency>
    <dependency><groupId>org.apache.commons</groupId><artifactId>commons-configuration2</artifactId><version>2.10.1</version></dependency>
    <dependency><groupId>commons-collections</groupId><artifactId>commons-collections</artifactId><version>3.2.2</version></dependency>
    <dependency><groupId>org.apache.commons</groupId><artifactId>commons-collections4</artifactId><version>4.4</version></dependency>
  </dependencies>
</project>
POM
  (cd "$pom" && mvn -B -q -Dstyle.color=never "$DEP_PLUGIN:copy-dependencies" -DincludeScope=runtime \
    -DexcludeGroupIds=org.apache.kafka -DexcludeArtifactIds=slf4j-api -DoutputDirectory="$out" >&2) \
    || die "lakehouse: Maven could not resolve org.apache.iceberg:iceberg-kafka-connect:$ICEBERG_VERSION and its runtime (see above)"
  touch "$out/.complete-$ICEBERG_VERSION-$HADOOP_VERSION"
}

# PyIceberg (SqlCatalog on PostgreSQL through psycopg2, pyarrow for the data files): the reader no one here wrote;
# DuckDB runs the documented SQL (the latest version per _id) over its scans.
install_pyiceberg() {
  local stamp="$LAKEHOUSE_VENV/.complete-$PYICEBERG_VERSION-$DUCKDB_VERSION"
  [[ -f "$stamp" ]] && return 0
  log "lakehouse: Python venv with pyiceberg $PYICEBERG_VERSION and duckdb $DUCKDB_VERSION (PyPI) in $LAKEHOUSE_VENV"
  rm -rf "$LAKEHOUSE_VENV"
  python3 -m venv "$LAKEHOUSE_VENV" >&2 || die "lakehouse: python3 -m venv failed (apt-get install -y python3-venv)"
  "$LAKEHOUSE_VENV/bin/pip" install -q --disable-pip-version-check \
    "pyiceberg[sql-postgres,pyarrow]==$PYICEBERG_VERSION" "duckdb==$DUCKDB_VERSION" >&2 \
    || die "lakehouse: pip could not install pyiceberg $PYICEBERG_VERSION / duckdb $DUCKDB_VERSION"
  touch "$stamp"
}

install_lakehouse() {
  local missing
  missing="$(lakehouse_missing)"
  [[ -z "$missing" ]] || die "lakehouse: $missing"
  install_connect   # the Apicurio converter and the worker's jars
  mkdir -p "$LAKEHOUSE_DIR/plugins" "$LAKEHOUSE_DIR/warehouse"
  install_iceberg_sink
  ln -sfn "$CONNECT_DIR/plugins/apicurio-converter" "$LAKEHOUSE_DIR/plugins/apicurio-converter"
  install_pyiceberg
}

lakehouse_db_setup() {
  psql -X -q "postgresql://postgres@$HOST:$POSTGRES_PORT/postgres" -v ON_ERROR_STOP=1 >&2 <<SQL \
    || die "lakehouse: could not create database $LAKEHOUSE_DB"
SELECT 'CREATE DATABASE $LAKEHOUSE_DB OWNER $WAREHOUSE_USER'
  WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = '$LAKEHOUSE_DB') \gexec
SQL
}

write_lakehouse_config() {
  sed -e "s#^group.id=.*#group.id=$LAKEHOUSE_CONNECT_GROUP#" \
    -e "s#^listeners=.*#listeners=http://$HOST:$LAKEHOUSE_CONNECT_PORT#" \
    -e "s#^rest.advertised.port=.*#rest.advertised.port=$LAKEHOUSE_CONNECT_PORT#" \
    -e "s#_$CONNECT_GROUP\.#_$LAKEHOUSE_CONNECT_GROUP.#" \
    -e "s#^plugin.path=.*#plugin.path=$LAKEHOUSE_DIR/plugins#" \
    -e 's#^\# Written by.*#\# Written by scripts/stack.sh (regenerated on every up --with lakehouse).#' \
    "$CONNECT_DIR/worker.properties" >"$LAKEHOUSE_WORKER_PROPS"
  # one worker per group here: a worker that died gets its tasks back when it rejoins, without the default 5-minute
  # wait for a departed member (incremental cooperative rebalancing)
  printf 'scheduled.rebalance.max.delay.ms=0\n' >>"$LAKEHOUSE_WORKER_PROPS"
  cat >"$LAKEHOUSE_DIR/log4j2.properties" <<'PROPS'
status = warn
appender.console.type = Console
appender.console.name = STDOUT
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = [%d] %p [%t] %X{connector.context}%m (%c)%n
rootLogger.level = info
rootLogger.appenderRef.stdout.ref = STDOUT
logger.reflections.name = org.reflections
logger.reflections.level = error
logger.hadoop.name = org.apache.hadoop
logger.hadoop.level = warn
logger.parquet.name = org.apache.parquet
logger.parquet.level = warn
PROPS
}

start_lakehouse_connect() {
  write_connect_config   # the warehouse worker's settings are the base (converters, config providers)
  write_lakehouse_config
  mkdir -p "$LAKEHOUSE_DIR/logs"
  # the log of the worker before (a killed one, say) is kept beside the new one: what it did before it died
  [[ ! -s "$LAKEHOUSE_LOG" ]] || mv -f "$LAKEHOUSE_LOG" "$LAKEHOUSE_LOG.previous"
  log "lakehouse: starting Kafka Connect $KAFKA_VERSION with the Iceberg sink (group $LAKEHOUSE_CONNECT_GROUP) on $LAKEHOUSE_CONNECT_URL"
  start_detached "$RUN_DIR/$LAKEHOUSE_PIDNAME.pid" "$LAKEHOUSE_LOG" java -Xms256m -Xmx768m -XX:+UseG1GC \
    -XX:MaxGCPauseMillis=20 -Djava.awt.headless=true -XX:TieredStopAtLevel=1 \
    -Dlog4j2.configurationFile="$LAKEHOUSE_DIR/log4j2.properties" -Dkafka.logs.dir="$LAKEHOUSE_DIR/logs" \
    -cp "$KAFKA_DIR/libs/*" org.apache.kafka.connect.cli.ConnectDistributed "$LAKEHOUSE_WORKER_PROPS"
}

# Called by cmd_up after warehouse_up (PostgreSQL answers by then).
lakehouse_up() {
  local connect
  install_lakehouse
  lakehouse_db_setup
  connect="$(plan_service lakehouse-connect lakehouse_connect_answers "$LAKEHOUSE_CONNECT_PORT" "$LAKEHOUSE_PIDNAME" "$LAKEHOUSE_CONNECT_URL")"
  [[ "$connect" == reuse ]] || UP_STARTED+=("$LAKEHOUSE_PIDNAME")
  [[ "$connect" != start ]] || start_lakehouse_connect
  [[ "$connect" == reuse ]] || wait_until lakehouse-connect "$CONNECT_WAIT_S" lakehouse_connect_answers "$LAKEHOUSE_LOG" "$LAKEHOUSE_PIDNAME"
}

# Stops every lakehouse worker this stack started (the default one and any a test started on its own port).
lakehouse_down() {
  local f name pid any=1
  for f in "$RUN_DIR"/lakehouse-connect-*.pid; do
    [[ -e "$f" ]] || continue
    name="$(basename "$f" .pid)"
    if pid="$(owned_pid "$name")"; then stop_pid "$name" "$pid"; any=0; fi
  done
  port_open "$LAKEHOUSE_CONNECT_PORT" && log "lakehouse-connect: port $LAKEHOUSE_CONNECT_PORT still answers (not started by this stack: left alone)"
  return $any
}

lakehouse_status() {
  [[ "$1" == 1 ]] || port_open "$LAKEHOUSE_CONNECT_PORT" || return 0
  local pid how="not started by this stack"
  if pid="$(owned_pid "$LAKEHOUSE_PIDNAME")"; then how="started by this stack, pid $pid"; fi
  if lakehouse_connect_answers; then log "lakehouse-connect: up   $LAKEHOUSE_CONNECT_URL ($how)"; return 0; fi
  log "lakehouse-connect: down $LAKEHOUSE_CONNECT_URL"
  [[ "$1" == 1 ]] && return 1
  return 0
}
