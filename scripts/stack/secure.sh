# shellcheck shell=bash
# The secured local stack (`scripts/stack.sh up|down|status|env|reset --secure`), sourced by scripts/stack.sh.
# Its own directory (.stack-secure/, or STACK_DIR) and its own ports, so it runs beside the plaintext stack:
#
#   Kafka   127.0.0.1:29092  SASL_SSL (SCRAM-SHA-256 and -512 users, created when the storage is formatted, PLAIN, and
#                            OAUTHBEARER validating signed JWTs against the stack's JWKS file, <stack>/oauth), ACLs:
#                            users gamedata and CN=gamedata-client may do everything, user outsider nothing
#           127.0.0.1:29095  SSL with client certificates required (mutual TLS)
#           127.0.0.1:29093  the KRaft controller (SASL_SSL, PLAIN as admin, loopback, broker-internal)
#   Registry 127.0.0.1:28082 nginx: TLS + HTTP basic auth in front of an Apicurio Registry on 127.0.0.1:28081, which
#                            asks for the same basic auth itself (also on 127.0.0.2:28082, an address the
#                            certificate does not name: host-name tests)
#   Redis   127.0.0.1:26479  TLS only (no plaintext port), ACL user `gamedata` with a password, `default` disabled
#   --with warehouse: Connect 127.0.0.1:28083 (REST basic auth, SASL_SSL to Kafka), PostgreSQL 127.0.0.1:25432 (SCRAM
#                            passwords over TCP; the admin role only through its socket)
#
# A private CA and the server / client certificates are made with openssl under <stack>/tls (once), with names
# localhost and 127.0.0.1. Passwords are random, made once, in <stack>/secrets (mode 600). `env --secure` prints
# every setting a client needs (GAMEDATA_KAFKA_SECURITY_PROTOCOL=SASL_SSL ..., REDIS_URL=rediss://gamedata:...@).
# Jars and the Apicurio app are reused from the plaintext stack's folder (.stack/) when it has them.
# Needs openssl and nginx (Debian's nginx-light; installed when missing, like scripts/ensure-deps.sh does).

SEC_TLS="$STACK/tls"
SEC_SECRETS="$STACK/secrets"
# OAUTHBEARER: the key the stack's tokens are signed with (private, for tests' token endpoints) and its JWKS (public,
# read by the broker's validator); issuer and audience the broker expects in a token
SEC_OAUTH="$STACK/oauth"
OAUTH_ISSUER="gamedata-local-stack"
OAUTH_AUDIENCE="gamedata-kafka"
KAFKA_MTLS_PORT="${STACK_KAFKA_MTLS_PORT:-29095}"
REGISTRY_PUBLIC_PORT="${STACK_REGISTRY_PUBLIC_PORT:-28082}"
NGINX_DIR="$STACK/nginx"
# where the plaintext stack's downloads are reused from (a test starting a throwaway secure stack points it elsewhere)
PLAIN_STACK="${STACK_PLAIN_DIR:-$ROOT/.stack}"
# nginx's workers (user nobody when the master runs as root) read the password file and write temp files; when they
# cannot reach $NGINX_DIR (a checkout in a private folder, as `mktemp -d` makes), both live here instead, a path that
# still names the stack folder (like PostgreSQL's data in scripts/stack/warehouse.sh)
NGINX_ALT_DIR="/tmp/gamedata-nginx$STACK"

secure_paths() {
  KAFKA_URL="$HOST:$KAFKA_PORT"
  REGISTRY_PUBLIC_ROOT="https://$HOST:$REGISTRY_PUBLIC_PORT"
}

# A secret, made once (alphanumeric: safe in URLs, JAAS and properties). args: name
secret() {
  local file="$SEC_SECRETS/$1"
  if [[ ! -s "$file" ]]; then
    mkdir -p "$SEC_SECRETS"; chmod 700 "$SEC_SECRETS"
    (umask 077; head -c 48 /dev/urandom | base64 | tr -dc 'A-Za-z0-9' | head -c 24 >"$file")
  fi
  cat "$file"
}

# CA, server certificate (localhost, 127.0.0.1), client certificate (mutual TLS), and a second, unrelated CA that
# tests use as a wrong trust anchor.
make_certificates() {
  [[ -s "$SEC_TLS/client-encrypted.key" && -s "$SEC_TLS/other-ca.pem" ]] && return 0
  secret client-key >/dev/null
  need openssl "apt-get install -y openssl"
  log "tls: making a private CA and certificates in $SEC_TLS"
  mkdir -p "$SEC_TLS"
  local d="$SEC_TLS"
  (
    set -e
    umask 077
    openssl req -x509 -newkey rsa:2048 -nodes -sha256 -days 3650 -subj "/CN=gamedata local stack CA" \
      -keyout "$d/ca.key" -out "$d/ca.pem" 2>/dev/null
    openssl req -x509 -newkey rsa:2048 -nodes -sha256 -days 3650 -subj "/CN=some other CA" \
      -keyout "$d/other-ca.key" -out "$d/other-ca.pem" 2>/dev/null
    printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n' >"$d/server.ext"
    openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" -keyout "$d/server.key" -out "$d/server.csr" 2>/dev/null
    openssl x509 -req -sha256 -days 3650 -in "$d/server.csr" -CA "$d/ca.pem" -CAkey "$d/ca.key" -CAcreateserial \
      -extfile "$d/server.ext" -out "$d/server.pem" 2>/dev/null
    printf 'extendedKeyUsage=clientAuth\n' >"$d/client.ext"
    openssl req -newkey rsa:2048 -nodes -subj "/CN=gamedata-client" -keyout "$d/client.key" -out "$d/client.csr" 2>/dev/null
    openssl x509 -req -sha256 -days 3650 -in "$d/client.csr" -CA "$d/ca.pem" -CAkey "$d/ca.key" -CAcreateserial \
      -extfile "$d/client.ext" -out "$d/client.pem" 2>/dev/null
    # Kafka's PEM key store wants the key as PKCS#8 next to its certificate
    openssl pkcs8 -topk8 -nocrypt -in "$d/server.key" -out "$d/server.pk8.key"
    # the client key once more, encrypted (GAMEDATA_KAFKA_SSL_KEY_PASSWORD)
    openssl pkcs8 -topk8 -v2 aes-256-cbc -in "$d/client.key" -out "$d/client-encrypted.key" \
      -passout "file:$SEC_SECRETS/client-key"
    cat "$d/server.pk8.key" "$d/server.pem" >"$d/server-keystore.pem"
    rm -f "$d"/*.csr "$d"/*.srl
    chmod 644 "$d"/*.pem   # certificates are public; keys stay 600
  ) || die "tls: openssl could not make the certificates"
}

# The OAUTHBEARER signing key (RSA, PKCS#8 PEM, mode 600) and its public half as a JWKS file (kid "stack-1"), once.
# Whoever holds the key can mint tokens the broker accepts: tests' token endpoints (a real deployment's IdP) do.
make_oauth_keys() {
  [[ -s "$SEC_OAUTH/jwks.json" && -s "$SEC_OAUTH/signing.key" ]] && return 0
  mkdir -p "$SEC_OAUTH"; chmod 700 "$SEC_OAUTH"
  (umask 077; openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$SEC_OAUTH/signing.key" 2>/dev/null) \
    || die "oauth: openssl could not make the signing key"
  node -e '
    const { createPublicKey } = require("node:crypto");
    const { readFileSync, writeFileSync } = require("node:fs");
    const jwk = createPublicKey(readFileSync(process.argv[1])).export({ format: "jwk" });
    writeFileSync(process.argv[2], JSON.stringify({ keys: [{ ...jwk, kid: "stack-1", use: "sig", alg: "RS256" }] }));
  ' "$SEC_OAUTH/signing.key" "$SEC_OAUTH/jwks.json" || die "oauth: could not write the JWKS file"
  chmod 644 "$SEC_OAUTH/jwks.json"
}

# Reuse the plaintext stack's downloads (jars, Apicurio) instead of fetching them again.
reuse_downloads() {
  mkdir -p "$KAFKA_DIR" "$REGISTRY_DIR"
  if [[ ! -e "$KAFKA_DIR/libs" && -f "$PLAIN_STACK/kafka/libs/.complete-$KAFKA_VERSION" ]]; then
    ln -s "$PLAIN_STACK/kafka/libs" "$KAFKA_DIR/libs"
  fi
  if [[ ! -e "$REGISTRY_DIR/app-$APICURIO_VERSION" && -f "$PLAIN_STACK/apicurio/app-$APICURIO_VERSION/quarkus-run.jar" ]]; then
    ln -s "$PLAIN_STACK/apicurio/app-$APICURIO_VERSION" "$REGISTRY_DIR/app-$APICURIO_VERSION"
  fi
  if [[ ! -e "$STACK/jdk" && -d "$PLAIN_STACK/jdk" ]]; then ln -s "$PLAIN_STACK/jdk" "$STACK/jdk"; fi
  if [[ -n "$WITH_WAREHOUSE" && ! -e "$CONNECT_DIR/plugins" && -d "$PLAIN_STACK/connect/plugins/apicurio-converter" ]]; then
    mkdir -p "$CONNECT_DIR"
    ln -s "$PLAIN_STACK/connect/plugins" "$CONNECT_DIR/plugins"
  fi
}

# ---- the secured warehouse (--with warehouse): overrides of scripts/stack/warehouse.sh

# The worker's own clients speak SASL_SSL as the pipeline's user; each sink connector brings its own settings
# (consumer/producer/admin overrides, its Avro converter with the registry's credentials: `gamedata connect create`).
# The worker's default value converter is a plain string one: a connector without credentials cannot read Avro.
write_connect_config() {
  (umask 077; cat >"$CONNECT_DIR/worker.properties" <<PROPS
# Written by scripts/stack.sh --secure (regenerated on every up --with warehouse). Contains a password.
bootstrap.servers=$KAFKA_URL
security.protocol=SASL_SSL
sasl.mechanism=SCRAM-SHA-512
sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="gamedata" password="$(secret kafka-gamedata)";
ssl.truststore.type=PEM
ssl.truststore.location=$SEC_TLS/ca.pem
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
plugin.discovery=hybrid_warn
# connectors' secrets through config providers, never inline: \${file:<path>:<key>} (GAMEDATA_CONNECT_SECRETS_FILE,
# written by \`gamedata connect secrets-file\`) or \${env:<NAME>}
config.providers=file,env
config.providers.file.class=org.apache.kafka.common.config.provider.FileConfigProvider
config.providers.env.class=org.apache.kafka.common.config.provider.EnvVarConfigProvider
connector.client.config.override.policy=All
key.converter=org.apache.kafka.connect.storage.StringConverter
value.converter=org.apache.kafka.connect.storage.StringConverter
# HTTP basic auth on the REST API (users in rest-users.properties, JAAS in rest-jaas.conf)
rest.extension.classes=org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension
PROPS
  )
  (umask 077
   printf 'gamedata: %s\n' "$(secret connect-gamedata)" >"$CONNECT_DIR/rest-users.properties"
   printf 'KafkaConnect {\n  org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule required file="%s";\n};\n' \
     "$CONNECT_DIR/rest-users.properties" >"$CONNECT_DIR/rest-jaas.conf")
  # the REST extension is not among the broker's jars: fetched once from Maven Central
  if [[ ! -f "$CONNECT_DIR/rest-ext/connect-basic-auth-extension-$KAFKA_VERSION.jar" ]]; then
    need mvn "install Maven (apt-get install -y maven)"
    log "connect: fetching connect-basic-auth-extension $KAFKA_VERSION (Maven)"
    mvn -B -q -Dstyle.color=never "$DEP_PLUGIN:copy" "-Dartifact=org.apache.kafka:connect-basic-auth-extension:$KAFKA_VERSION" \
      -DoutputDirectory="$CONNECT_DIR/rest-ext" >&2 || die "connect: Maven could not fetch connect-basic-auth-extension"
  fi
  cp "$KAFKA_DIR/log4j2.properties" "$CONNECT_DIR/log4j2.properties"
  # the registry's private CA, for the Avro converter (it loads Java key stores only: PKCS12 made with keytool)
  if [[ ! -s "$CONNECT_DIR/truststore.p12" ]]; then
    need keytool "install a JDK (keytool)"
    keytool -importcert -noprompt -alias stack-ca -file "$SEC_TLS/ca.pem" -keystore "$CONNECT_DIR/truststore.p12" \
      -storetype PKCS12 -storepass changeit >/dev/null 2>&1 || die "connect: keytool could not make the trust store"
  fi
}

# PostgreSQL with passwords: the role gamedata logs in over TCP with SCRAM-SHA-256 only (its password a secret of the
# stack, set again on every up); the admin role postgres only through the Unix socket in the data directory, a folder
# of mode 700 (its owner and root). WAREHOUSE_URL names no password in logs; `env` prints it with the password.
WAREHOUSE_URL="postgresql://$WAREHOUSE_USER@$HOST:$POSTGRES_PORT/$WAREHOUSE_DB"
postgres_configure() {
  local hba="$1/pg_hba.conf"
  cat >"$hba.new" <<EOF
# Written by scripts/stack.sh --secure (every up): SCRAM passwords over TCP; the admin role only through the socket.
local all postgres trust
host all all 127.0.0.1/32 scram-sha-256
host all all ::1/128 scram-sha-256
EOF
  chmod 600 "$hba.new"
  [[ "$(id -u)" != 0 ]] || chown postgres: "$hba.new"
  mv -f "$hba.new" "$hba"
}

# psql as the admin role through the socket. args: psql options...
postgres_admin_psql() {
  local data
  data="$(postgres_home)/data"
  as_pg_owner psql -X -q -h "$data" -p "$POSTGRES_PORT" -U postgres -d postgres "$@"
}

postgres_setup() {
  local start=$SECONDS
  until postgres_admin_psql -t -A -c 'select 1' >/dev/null 2>&1; do
    ((SECONDS - start < POSTGRES_WAIT_S)) || { log_tail postgres "$(postgres_log)"; die "postgres: no answer"; }
    sleep 0.3
  done
  # the password through psql's stdin, not argv; set again each time (a cluster made before had none, or another)
  postgres_admin_psql -v ON_ERROR_STOP=1 >&2 <<SQL || die "postgres: could not create role/database $WAREHOUSE_DB"
SET password_encryption = 'scram-sha-256';
SELECT 'CREATE ROLE $WAREHOUSE_USER LOGIN SUPERUSER'
  WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$WAREHOUSE_USER') \gexec
ALTER ROLE $WAREHOUSE_USER PASSWORD '$(secret postgres-gamedata)';
SELECT 'CREATE DATABASE $WAREHOUSE_DB OWNER $WAREHOUSE_USER'
  WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = '$WAREHOUSE_DB') \gexec
SQL
}

# The role logs in with its password (in the environment of psql, not its argv).
postgres_answers() {
  PGPASSWORD="$(secret postgres-gamedata)" PGCONNECT_TIMEOUT=3 psql -X -q -t -A "$WAREHOUSE_URL" -c 'select 1' 2>/dev/null |
    grep -qx 1
}

print_warehouse_env() {
  printf 'export CONNECT_URL=%s\n' "$CONNECT_URL"
  printf 'export WAREHOUSE_URL=postgresql://%s:%s@%s:%s/%s\n' "$WAREHOUSE_USER" "$(secret postgres-gamedata)" "$HOST" \
    "$POSTGRES_PORT" "$WAREHOUSE_DB"
}

# The REST API wants the stack's credentials.
connect_answers() {
  # the credentials through curl's config on stdin, not its argv (readable by every user in /proc)
  printf 'user = "gamedata:%s"\n' "$(secret connect-gamedata)" |
    curl -fsS -m 3 -o /dev/null -K - "$CONNECT_URL/connectors" 2>/dev/null
}

start_connect() {
  mkdir -p "$CONNECT_DIR/logs"
  write_connect_config
  log "connect: starting Kafka Connect $KAFKA_VERSION on SASL_SSL (distributed, group $CONNECT_GROUP) on $CONNECT_URL"
  start_detached "$RUN_DIR/connect.pid" "$CONNECT_DIR/connect.out" java -Xms256m -Xmx768m -XX:+UseG1GC \
    -XX:MaxGCPauseMillis=20 -Djava.awt.headless=true \
    -Djavax.net.ssl.trustStore="$CONNECT_DIR/truststore.p12" -Djavax.net.ssl.trustStorePassword=changeit \
    -Djavax.net.ssl.trustStoreType=PKCS12 -Djava.security.auth.login.config="$CONNECT_DIR/rest-jaas.conf" \
    -Dlog4j2.configurationFile="$CONNECT_DIR/log4j2.properties" -Dkafka.logs.dir="$CONNECT_DIR/logs" \
    -cp "$KAFKA_DIR/libs/*:$CONNECT_DIR/rest-ext/*" org.apache.kafka.connect.cli.ConnectDistributed "$CONNECT_DIR/worker.properties"
}

write_secure_kafka_properties() {
  local admin_pw app_pw t="$SEC_TLS"
  admin_pw="$(secret kafka-admin)"
  # made private before the password is written into it (umask), not after
  rm -f "$KAFKA_DIR/server.properties"
  (umask 077; cat >"$KAFKA_DIR/server.properties") <<EOF
# Written by scripts/stack.sh --secure (regenerated on every up). Contains the broker's own SCRAM password.
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@$HOST:$KAFKA_CONTROLLER_PORT
listeners=SASL_SSL://$HOST:$KAFKA_PORT,MTLS://$HOST:$KAFKA_MTLS_PORT,CONTROLLER://$HOST:$KAFKA_CONTROLLER_PORT
advertised.listeners=SASL_SSL://$HOST:$KAFKA_PORT,MTLS://$HOST:$KAFKA_MTLS_PORT
inter.broker.listener.name=SASL_SSL
controller.listener.names=CONTROLLER
# the KRaft controller too: TLS and SASL PLAIN as admin (KRaft controllers cannot use SCRAM: its credentials live in
# the metadata the controller serves), so no anonymous principal is a super user
listener.security.protocol.map=CONTROLLER:SASL_SSL,SASL_SSL:SASL_SSL,MTLS:SSL
sasl.mechanism.controller.protocol=PLAIN
listener.name.controller.sasl.enabled.mechanisms=PLAIN
listener.name.controller.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="$admin_pw" user_admin="$admin_pw";
sasl.enabled.mechanisms=SCRAM-SHA-256,SCRAM-SHA-512,PLAIN,OAUTHBEARER
# OAUTHBEARER as an IdP-backed cluster validates it: a JWT signed by a key of the JWKS (the stack's own, a file; an
# https:// JWKS URL works alike), from the expected issuer, for the expected audience, not expired (2 s of skew);
# "sub" is the principal. Sessions last at most 60 s, then the client re-authenticates with a token still valid
# (tokens are short-lived in the tests: a client that does not refresh its token loses its connections)
listener.name.sasl_ssl.oauthbearer.sasl.server.callback.handler.class=org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler
listener.name.sasl_ssl.oauthbearer.sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_sub="admin";
listener.name.sasl_ssl.oauthbearer.connections.max.reauth.ms=60000
# BrokerJwtValidator by name: Kafka 4.1's default (DefaultJwtValidator, made without a key resolver) falls back to
# ClientJwtValidator, which checks claims but not the signature (a token signed by any key was accepted)
sasl.oauthbearer.jwt.validator.class=org.apache.kafka.common.security.oauthbearer.BrokerJwtValidator
sasl.oauthbearer.jwks.endpoint.url=file://$SEC_OAUTH/jwks.json
sasl.oauthbearer.expected.issuer=$OAUTH_ISSUER
sasl.oauthbearer.expected.audience=$OAUTH_AUDIENCE
sasl.oauthbearer.clock.skew.seconds=2
sasl.mechanism.inter.broker.protocol=SCRAM-SHA-512
listener.name.sasl_ssl.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="$admin_pw" user_admin="$admin_pw" user_gamedata="$(secret kafka-gamedata)";
listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="admin" password="$admin_pw";
listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="admin" password="$admin_pw";
ssl.keystore.type=PEM
ssl.keystore.location=$t/server-keystore.pem
ssl.truststore.type=PEM
ssl.truststore.location=$t/ca.pem
listener.name.mtls.ssl.client.auth=required
ssl.endpoint.identification.algorithm=https
# ACLs: the pipeline's users may do everything (scripts/stack.sh adds the ACLs), any other user nothing; admin (the
# broker itself, on the inter-broker and controller listeners) is the one super user
authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer
super.users=User:admin
allow.everyone.if.no.acl.found=false
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
num.network.threads=2
num.io.threads=2
background.threads=2
num.recovery.threads.per.data.dir=1
EOF
  chmod 600 "$KAFKA_DIR/server.properties"
}

start_secure_kafka() {
  mkdir -p "$KAFKA_DIR/data" "$KAFKA_DIR/logs"
  local cp="$KAFKA_DIR/libs/*" admin_pw app_pw id=""
  admin_pw="$(secret kafka-admin)"
  app_pw="$(secret kafka-gamedata)"
  if [[ ! -f "$KAFKA_DIR/data/meta.properties" ]]; then
    while [[ -z "$id" || "$id" == -* ]]; do id="$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')"; done
    log "kafka: formatting storage (cluster id $id) with SCRAM users admin and gamedata"
    # the passwords go in a java @argfile (mode 600, removed after), not in argv: /proc/<pid>/cmdline is readable by
    # every user, and the launcher expands the file inside the process
    local args="$KAFKA_DIR/format.args" rc=0
    rm -f "$args"
    (umask 077; printf '%s\n' kafka.tools.StorageTool format -t "$id" -c "$KAFKA_DIR/server.properties" \
      --ignore-formatted \
      --add-scram "SCRAM-SHA-512=[name=admin,password=$admin_pw]" \
      --add-scram "SCRAM-SHA-256=[name=admin,password=$admin_pw]" \
      --add-scram "SCRAM-SHA-512=[name=gamedata,password=$app_pw]" \
      --add-scram "SCRAM-SHA-256=[name=gamedata,password=$app_pw]" \
      --add-scram "SCRAM-SHA-512=[name=outsider,password=$(secret kafka-outsider)]" >"$args")
    java -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
      -Dlog4j2.configurationFile="$KAFKA_DIR/log4j2.properties" -Dlog4j2.level=warn -cp "$cp" "@$args" \
      >"$KAFKA_DIR/format.log" 2>&1 || rc=$?
    rm -f "$args"
    ((rc == 0)) || { log_tail kafka-format "$KAFKA_DIR/format.log"; die "kafka: storage format failed"; }
  fi
  log "kafka: starting $KAFKA_VERSION, SASL_SSL on $KAFKA_URL, mutual TLS on $HOST:$KAFKA_MTLS_PORT"
  # Kafka 4 reads OAUTHBEARER URLs and files only when allowed by name
  start_detached "$RUN_DIR/kafka.pid" "$KAFKA_DIR/kafka.out" java -Xms256m -Xmx768m -server -XX:+UseG1GC \
    -XX:MaxGCPauseMillis=20 -Djava.awt.headless=true \
    -Dorg.apache.kafka.sasl.oauthbearer.allowed.urls="file://$SEC_OAUTH/jwks.json" \
    -Dorg.apache.kafka.sasl.oauthbearer.allowed.files="$SEC_OAUTH/jwks.json" \
    -Dlog4j2.configurationFile="$KAFKA_DIR/log4j2.properties" -Dkafka.logs.dir="$KAFKA_DIR/logs" \
    -cp "$cp" kafka.Kafka "$KAFKA_DIR/server.properties"
}

# ACLs of the pipeline's principals (the SCRAM user and the mutual-TLS client certificate): everything on every
# topic, group and transactional id, and the cluster (idempotent writes). Once per storage (a stamp in the data dir).
add_acls() {
  [[ -f "$KAFKA_DIR/data/.acls-added" ]] && return 0
  local conf="$KAFKA_DIR/admin-client.properties"
  (umask 077; cat >"$conf" <<EOF
security.protocol=SASL_SSL
sasl.mechanism=SCRAM-SHA-512
sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="admin" password="$(secret kafka-admin)";
ssl.truststore.type=PEM
ssl.truststore.location=$SEC_TLS/ca.pem
EOF
  )
  log "kafka: adding the ACLs of User:gamedata and User:CN=gamedata-client"
  java -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
    -Dlog4j2.configurationFile="$KAFKA_DIR/log4j2.properties" -Dlog4j2.level=warn -cp "$KAFKA_DIR/libs/*" \
    org.apache.kafka.tools.AclCommand --bootstrap-server "$KAFKA_URL" --command-config "$conf" --add \
    --allow-principal User:gamedata --allow-principal User:CN=gamedata-client --operation All \
    --topic '*' --group '*' --transactional-id '*' --cluster \
    >"$KAFKA_DIR/acls.log" 2>&1 || { log_tail kafka-acls "$KAFKA_DIR/acls.log"; die "kafka: could not add the ACLs"; }
  touch "$KAFKA_DIR/data/.acls-added"
}

# Kafka answers a SASL_SSL metadata request (the stack's own probe, with the client settings of `env --secure`).
secure_kafka_answers() {
  (eval "$(print_secure_env)"; node "$ROOT/scripts/stack/kafka-ready.mjs" "$KAFKA_URL" "${1:-3000}" 1 2>/dev/null)
}

# The registry asks for HTTP basic auth itself too (Quarkus's embedded realm: user gamedata, the same password as
# nginx's, stored as a SHA-512 digest, never in plain text): nothing on loopback reads or writes schemas past nginx
# without the password. nginx passes the client's Authorization header through, so each request is checked twice.
REGISTRY_AUTH_PROPERTIES="$REGISTRY_DIR/auth.properties"
write_registry_auth() {
  local digest
  # HEX(SHA-512("user:realm:password")), the embedded realm's form with plain-text=false (realm "Quarkus", its default)
  digest="$(printf 'gamedata:Quarkus:%s' "$(secret registry-gamedata)" | openssl dgst -sha512 -r | cut -d' ' -f1)"
  [[ "$digest" =~ ^[0-9a-f]{128}$ ]] || die "registry: could not digest its password"
  rm -f "$REGISTRY_AUTH_PROPERTIES"
  (umask 077; cat >"$REGISTRY_AUTH_PROPERTIES") <<EOF
# Written by scripts/stack.sh --secure: every API path of the registry wants HTTP basic auth (user gamedata).
quarkus.http.auth.basic=true
quarkus.security.users.embedded.enabled=true
quarkus.security.users.embedded.plain-text=false
quarkus.security.users.embedded.algorithm=digest-sha-512
quarkus.security.users.embedded.users.gamedata=$digest
quarkus.http.auth.permission.api.paths=/*
quarkus.http.auth.permission.api.policy=authenticated
EOF
}

start_secure_registry() {
  # the registry itself listens on loopback only; clients reach it through nginx (TLS + basic auth)
  write_registry_auth
  REGISTRY_EXTRA_ARGS=("-Dquarkus.config.locations=file:$REGISTRY_AUTH_PROPERTIES")
  start_registry
}

# The registry's own probe and default settings, with its password (through curl's config on stdin, not argv).
registry_answers() {
  printf 'user = "gamedata:%s"\n' "$(secret registry-gamedata)" |
    curl -fsS -m 3 -o /dev/null -K - "$REGISTRY_URL/subjects" 2>/dev/null
}

registry_defaults() {
  printf 'user = "gamedata:%s"\n' "$(secret registry-gamedata)" |
    curl -fsS -m 10 -o /dev/null -K - -X PUT -H 'Content-Type: application/vnd.schemaregistry.v1+json' \
      -d '{"compatibility":"BACKWARD"}' "$REGISTRY_URL/config" || die "registry: could not set the default compatibility"
}

install_nginx() {
  command -v nginx >/dev/null 2>&1 && return 0
  local sudo=""
  [[ "$(id -u)" == 0 ]] || sudo=sudo
  log "nginx: apt-get install nginx-light (the registry's TLS + basic auth proxy)"
  $sudo apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends nginx-light >&2 \
    || die "nginx: could not install nginx-light"
}

# The folder nginx's workers read and write (the password file, temp files). As root, the workers run as `nobody`:
# when that user cannot traverse to $NGINX_DIR, the folder is $NGINX_ALT_DIR, reachable by nobody's group only.
nginx_worker_dir() {
  if [[ "$(id -u)" == 0 ]] && ! runuser -u nobody -- test -x "$NGINX_DIR" 2>/dev/null; then
    local d="$NGINX_ALT_DIR"
    mkdir -p "$d"
    chmod 755 /tmp/gamedata-nginx
    # every folder between /tmp/gamedata-nginx and the alt dir: traversable, not listable
    while [[ "$d" != /tmp/gamedata-nginx && "$d" != / ]]; do chmod 711 "$d"; d="$(dirname "$d")"; done
    chgrp "$(id -gn nobody)" "$NGINX_ALT_DIR" && chmod 750 "$NGINX_ALT_DIR"
    printf '%s' "$NGINX_ALT_DIR"; return
  fi
  printf '%s' "$NGINX_DIR"
}

write_nginx_config() {
  local pw hash wdir user_line=""
  pw="$(secret registry-gamedata)"
  mkdir -p "$NGINX_DIR"
  wdir="$(nginx_worker_dir)"
  [[ "$wdir" == "$NGINX_DIR" ]] || log "nginx: its workers (user nobody) cannot reach $NGINX_DIR; password file and temp files in $wdir"
  mkdir -p "$wdir/tmp"
  hash="$(printf '%s' "$pw" | openssl passwd -apr1 -stdin)"   # not in argv
  (umask 077; printf 'gamedata:%s\n' "$hash" >"$wdir/htpasswd")
  if [[ "$(id -u)" == 0 ]]; then
    # workers run as nobody: the password file (a hash) is readable by nobody's group only, the temp folder theirs
    user_line="user nobody $(id -gn nobody);"
    chgrp "$(id -gn nobody)" "$wdir/htpasswd" && chmod 640 "$wdir/htpasswd"
    chown nobody: "$wdir/tmp" && chmod 700 "$wdir/tmp"
  fi
  cat >"$NGINX_DIR/nginx.conf" <<EOF
# Written by scripts/stack.sh --secure: TLS + basic auth in front of the registry (loopback only).
daemon off;
$user_line
worker_processes 1;
pid $RUN_DIR/nginx.ngx.pid;
error_log $NGINX_DIR/error.log warn;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path $wdir/tmp/body;
  proxy_temp_path $wdir/tmp/proxy;
  fastcgi_temp_path $wdir/tmp/fastcgi;
  uwsgi_temp_path $wdir/tmp/uwsgi;
  scgi_temp_path $wdir/tmp/scgi;
  client_max_body_size 16m;
  server {
    listen $HOST:$REGISTRY_PUBLIC_PORT ssl;
    # another loopback address, not in the certificate: tests of host-name mismatches
    listen 127.0.0.2:$REGISTRY_PUBLIC_PORT ssl;
    ssl_certificate $SEC_TLS/server.pem;
    ssl_certificate_key $SEC_TLS/server.key;
    auth_basic "schema registry";
    auth_basic_user_file $wdir/htpasswd;
    location / {
      proxy_pass http://$HOST:$REGISTRY_PORT;
      # the registry checks the same credentials again (write_registry_auth)
      proxy_http_version 1.1;
      proxy_set_header Connection "";
    }
  }
}
EOF
}

start_nginx() {
  write_nginx_config
  log "registry: nginx (TLS + basic auth) on $REGISTRY_PUBLIC_ROOT -> $REGISTRY_ROOT"
  start_detached "$RUN_DIR/nginx.pid" "$NGINX_DIR/nginx.out" nginx -c "$NGINX_DIR/nginx.conf" -e "$NGINX_DIR/error.log" -p "$NGINX_DIR"
}

secure_registry_answers() {
  printf 'user = "gamedata:%s"\n' "$(secret registry-gamedata)" |
    curl -fsS -m 3 -o /dev/null --cacert "$SEC_TLS/ca.pem" -K - \
    "$REGISTRY_PUBLIC_ROOT/apis/ccompat/v7/subjects" 2>/dev/null
}

write_redis_config() {
  local pw
  pw="$(secret redis-gamedata)"
  (umask 077; cat >"$REDIS_DIR/redis.conf" <<EOF
# Written by scripts/stack.sh --secure: TLS only, ACL user gamedata, the default user disabled.
bind $HOST
protected-mode yes
port 0
tls-port $REDIS_PORT
tls-cert-file $SEC_TLS/server.pem
tls-key-file $SEC_TLS/server.key
tls-ca-cert-file $SEC_TLS/ca.pem
tls-auth-clients no
user default off
user gamedata on >$pw ~* &* +@all
daemonize yes
dir $REDIS_DIR/data
pidfile $RUN_DIR/redis.pid
logfile $REDIS_DIR/redis.log
maxmemory-policy noeviction
appendonly yes
appendfsync everysec
save ""
EOF
  )
}

start_secure_redis() {
  mkdir -p "$REDIS_DIR/data"
  write_redis_config
  log "redis: starting with TLS only on $HOST:$REDIS_PORT (ACL user gamedata)"
  rm -f "$RUN_DIR/redis.pid"
  "$STACK/bin/redis-server" "$REDIS_DIR/redis.conf" 9>&- >&2 || { log_tail redis "$REDIS_DIR/redis.log"; die "redis: could not start"; }
}

secure_redis_answers() {
  # `timeout`: a TLS client facing a plaintext server waits for a handshake answer forever
  [[ "$(REDISCLI_AUTH="$(secret redis-gamedata)" timeout 5 redis-cli --tls --cacert "$SEC_TLS/ca.pem" -h "$HOST" -p "$REDIS_PORT" \
    --user gamedata --no-auth-warning ping 2>/dev/null)" == PONG ]]
}

print_secure_env() {
  printf 'export KAFKA_BROKERS=%s\n' "$KAFKA_URL"
  printf 'export GAMEDATA_KAFKA_SECURITY_PROTOCOL=SASL_SSL\n'
  printf 'export GAMEDATA_KAFKA_SASL_MECHANISM=SCRAM-SHA-512\n'
  printf 'export GAMEDATA_KAFKA_SASL_USERNAME=gamedata\n'
  printf 'export GAMEDATA_KAFKA_SASL_PASSWORD=%s\n' "$(secret kafka-gamedata)"
  printf 'export GAMEDATA_KAFKA_SSL_CA_LOCATION=%s\n' "$SEC_TLS/ca.pem"
  printf 'export SCHEMA_REGISTRY_URL=%s\n' "$REGISTRY_PUBLIC_ROOT/apis/ccompat/v7"
  printf 'export GAMEDATA_SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO=gamedata:%s\n' "$(secret registry-gamedata)"
  printf 'export GAMEDATA_SCHEMA_REGISTRY_SSL_CA_LOCATION=%s\n' "$SEC_TLS/ca.pem"
  printf 'export REDIS_URL=rediss://gamedata:%s@%s:%s\n' "$(secret redis-gamedata)" "$HOST" "$REDIS_PORT"
  printf 'export GAMEDATA_REDIS_TLS_CA_LOCATION=%s\n' "$SEC_TLS/ca.pem"
  # for mutual TLS instead of SASL: the other listener and the client certificate
  printf 'export STACK_SECURE_KAFKA_MTLS_BROKERS=%s\n' "$HOST:$KAFKA_MTLS_PORT"
  printf 'export STACK_SECURE_TLS_DIR=%s\n' "$SEC_TLS"
  # the passphrase of $SEC_TLS/client-encrypted.key
  printf 'export STACK_SECURE_CLIENT_KEY_PASSWORD=%s\n' "$(secret client-key)"
  # OAUTHBEARER: the key the broker trusts tokens from, and what it expects in them (tests mint tokens with these)
  printf 'export STACK_SECURE_OAUTH_SIGNING_KEY=%s\n' "$SEC_OAUTH/signing.key"
  printf 'export STACK_SECURE_OAUTH_ISSUER=%s\n' "$OAUTH_ISSUER"
  printf 'export STACK_SECURE_OAUTH_AUDIENCE=%s\n' "$OAUTH_AUDIENCE"
  # a SCRAM user without any ACL (tests of authorisation failures)
  printf 'export STACK_SECURE_KAFKA_OUTSIDER_PASSWORD=%s\n' "$(secret kafka-outsider)"
  if [[ -n "$WITH_WAREHOUSE" ]]; then
    print_warehouse_env
    printf 'export GAMEDATA_CONNECT_BASIC_AUTH_USER_INFO=gamedata:%s\n' "$(secret connect-gamedata)"
    # the connectors' secrets file as the worker reads it (written by `gamedata connect secrets-file --output` it)
    printf 'export GAMEDATA_CONNECT_SECRETS_FILE=%s\n' "$CONNECT_DIR/connector-secrets.properties"
  fi
}

# What this `up` started (or found starting from an earlier, interrupted one): stopped again when it fails, so a failed
# `up --secure` (a CI job's) leaves no Kafka, registry, Redis, nginx, Connect or PostgreSQL behind. Services that were
# already answering (reused) are left alone.
UP_STARTED=()

# EXIT trap of secure_up. On failure: stop, newest first, every service of UP_STARTED.
stop_started_on_failure() {
  local rc=$? name pid i
  trap - EXIT INT TERM
  ((rc != 0)) || return 0
  ((${#UP_STARTED[@]} > 0)) || exit "$rc"
  log "up failed (exit $rc): stopping what it started: ${UP_STARTED[*]}"
  for ((i = ${#UP_STARTED[@]} - 1; i >= 0; i--)); do
    name="${UP_STARTED[$i]}"
    pid="$(owned_pid "$name")" || continue
    [[ "$name" != postgres ]] || kill -INT "$pid" 2>/dev/null || true   # fast shutdown
    (stop_pid "$name" "$pid") || true
  done
  exit "$rc"
}

secure_up() {
  lock
  trap stop_started_on_failure EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  local t0=$SECONDS kafka registry proxy redis
  need java "install a JDK 17 (apt-get install -y openjdk-17-jre-headless)"
  need curl "apt-get install -y curl"
  need node "install Node 20"
  make_certificates
  make_oauth_keys
  reuse_downloads
  kafka="$(plan_service kafka secure_kafka_answers "$KAFKA_PORT" kafka "$KAFKA_URL")"
  [[ "$kafka" == reuse ]] || UP_STARTED+=(kafka)
  if [[ "$kafka" == start ]]; then install_kafka; write_secure_kafka_properties; start_secure_kafka; fi
  registry="$(plan_service registry registry_answers "$REGISTRY_PORT" registry "$REGISTRY_ROOT")"
  [[ "$registry" == reuse ]] || UP_STARTED+=(registry)
  [[ "$registry" != start ]] || { install_registry; start_secure_registry; }
  redis="$(plan_service redis secure_redis_answers "$REDIS_PORT" redis "$HOST:$REDIS_PORT")"
  [[ "$redis" == reuse ]] || UP_STARTED+=(redis)
  [[ "$redis" != start ]] || { install_redis; start_secure_redis; }
  install_nginx
  proxy="$(plan_service nginx secure_registry_answers_or_backend_down "$REGISTRY_PUBLIC_PORT" nginx "$REGISTRY_PUBLIC_ROOT")"
  [[ "$proxy" == reuse ]] || UP_STARTED+=(nginx)
  [[ "$proxy" != start ]] || start_nginx

  [[ "$redis" == reuse ]] || wait_until redis "$REDIS_WAIT_S" secure_redis_answers "$REDIS_DIR/redis.log" redis
  [[ "$kafka" == reuse ]] || wait_until kafka "$KAFKA_WAIT_S" secure_kafka_answers "$KAFKA_DIR/kafka.out" kafka
  add_acls
  if [[ "$registry" != reuse ]]; then
    wait_until registry "$REGISTRY_WAIT_S" registry_answers "$REGISTRY_DIR/registry.log" registry
    registry_defaults
  fi
  wait_until "registry proxy" 30 secure_registry_answers "$NGINX_DIR/error.log" nginx
  [[ -z "$WITH_WAREHOUSE" ]] || warehouse_up
  log "secure stack up in $((SECONDS - t0))s"
  trap - EXIT INT TERM
  print_secure_env
}

# nginx answers (any status) on its port: the backend may still be starting.
secure_registry_answers_or_backend_down() {
  local code
  code="$(curl -sS -m 3 -o /dev/null -w '%{http_code}' --cacert "$SEC_TLS/ca.pem" "$REGISTRY_PUBLIC_ROOT/" 2>/dev/null)" || return 1
  [[ "$code" == 401 ]]
}

secure_down() {
  lock
  local pid any=""
  warehouse_down && any=1
  if pid="$(owned_pid nginx)"; then stop_pid nginx "$pid"; any=1; fi
  if pid="$(owned_pid redis)"; then stop_pid redis "$pid"; any=1; fi
  if pid="$(owned_pid registry)"; then stop_pid registry "$pid"; any=1; fi
  if pid="$(owned_pid kafka)"; then stop_pid kafka "$pid"; any=1; fi
  rm -f "$RUN_DIR"/*.pid
  [[ -n "$any" ]] || log "nothing started by the secure stack is running"
  return 0
}

# Its one Kafka node stopped (controlled shutdown) and started again, for tests of TLS clients across a restart.
# args: node (1)
secure_stop_broker() {
  lock
  local pid
  [[ "$1" == 1 ]] || die "the secure stack has one Kafka node: stop-broker 1"
  pid="$(owned_pid kafka)" || die "kafka is not running (or not started by this stack)"
  stop_pid kafka "$pid"
}

secure_start_broker() {
  lock
  [[ "$1" == 1 ]] || die "the secure stack has one Kafka node: start-broker 1"
  ! owned_pid kafka >/dev/null || die "kafka is already running"
  write_secure_kafka_properties
  start_secure_kafka
  wait_until kafka "$KAFKA_WAIT_S" secure_kafka_answers "$KAFKA_DIR/kafka.out" kafka
}

secure_status() {
  local ok=0
  if secure_kafka_answers 3000; then log "kafka:    up   $KAFKA_URL (SASL_SSL)"; else log "kafka:    down $KAFKA_URL (SASL_SSL)"; ok=1; fi
  if secure_registry_answers; then log "registry: up   $REGISTRY_PUBLIC_ROOT/apis/ccompat/v7 (TLS + basic auth)"; else log "registry: down $REGISTRY_PUBLIC_ROOT"; ok=1; fi
  if secure_redis_answers; then log "redis:    up   rediss://$HOST:$REDIS_PORT (TLS + ACL user)"; else log "redis:    down rediss://$HOST:$REDIS_PORT"; ok=1; fi
  warehouse_status "$([[ -n "$WITH_WAREHOUSE" ]] && echo 1 || echo 0)" || ok=1
  return $ok
}

secure_reset() {
  secure_down
  log "wiping data: $KAFKA_DIR/data $REGISTRY_DIR/data $REDIS_DIR/data $POSTGRES_DIR/data"
  rm -rf "$KAFKA_DIR/data" "$REGISTRY_DIR/data" "$REDIS_DIR/data" "$POSTGRES_DIR/data" "$POSTGRES_ALT_DIR/data" "$NGINX_ALT_DIR"
}
