#!/bin/sh
# Generates what deploy/nats/nats-server.conf reads from outside git: a CA and a server certificate for
# TLS, one random password per service user and the JetStream encryption key. Private material is
# written with mode 600 into OUT_DIR (default deploy/nats/secrets, ignored by git); never commit it.
#
#   deploy/nats/generate.sh [OUT_DIR] [SERVER_NAMES]
#
# SERVER_NAMES: comma-separated DNS names the server certificate is valid for (default nats,localhost;
# 127.0.0.1 is always included). Existing files are kept, so re-running does not rotate anything; delete
# a file to regenerate it. Requires openssl.
set -eu

OUT_DIR=${1:-$(dirname "$0")/secrets}
SERVER_NAMES=${2:-nats,localhost}
DAYS=${RP_NATS_CERT_DAYS:-365}

mkdir -p "$OUT_DIR"
umask 077
cd "$OUT_DIR"

if [ ! -f ca-key.pem ]; then
  openssl req -x509 -newkey rsa:3072 -sha256 -nodes -days "$DAYS" \
    -keyout ca-key.pem -out ca.pem -subj "/CN=rolepolicy NATS CA" 2>/dev/null
fi

if [ ! -f server-key.pem ]; then
  san="IP:127.0.0.1"
  for name in $(echo "$SERVER_NAMES" | tr ',' ' '); do san="$san,DNS:$name"; done
  openssl req -newkey rsa:3072 -sha256 -nodes -keyout server-key.pem -out server.csr \
    -subj "/CN=rolepolicy NATS server" 2>/dev/null
  printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth\n' "$san" > server.ext
  openssl x509 -req -in server.csr -CA ca.pem -CAkey ca-key.pem -CAcreateserial -days "$DAYS" \
    -sha256 -extfile server.ext -out server-cert.pem 2>/dev/null
  rm -f server.csr server.ext ca.srl
fi

# The server reads these variables; each service gets NATS_USER=<service> and its own password. nats-server
# parses a variable's value as configuration, so each value starts with a letter (a hex string starting with
# a digit would be read as a number and refused).
if [ ! -f nats.env ]; then
  {
    echo "RP_JS_KEY=k$(openssl rand -hex 32)"
    for service in K8S_GATEWAY PLANNER INSPECTOR EXECUTOR ACCESS_SCHEDULER; do
      echo "RP_NATS_PASSWORD_${service}=p$(openssl rand -hex 24)"
    done
  } > nats.env
fi

# The inspectors' seal key pair (ADR 0024): the planner seals each inspect request's connection to the
# public half, the inspectors open it with the private half. Base64 DER (SPKI / PKCS#8) of an X25519 key.
if [ ! -f inspect-seal.env ]; then
  openssl genpkey -algorithm X25519 -outform DER -out inspect-seal.der 2>/dev/null
  {
    echo "INSPECT_SEAL_PRIVATE_KEY=$(base64 < inspect-seal.der | tr -d '\n')"
    echo "INSPECT_SEAL_PUBLIC_KEY=$(openssl pkey -inform DER -in inspect-seal.der -pubout -outform DER | base64 | tr -d '\n')"
  } > inspect-seal.env
  rm -f inspect-seal.der
fi

# Certificates are public; keys and the env files stay private.
chmod 644 ca.pem server-cert.pem
chmod 600 ca-key.pem server-key.pem nats.env inspect-seal.env
echo "NATS TLS material and secrets are in $OUT_DIR"
