#!/usr/bin/env bash
# A CA and server certificates for running the compose stack with TLS on
# (docker-compose.tls.yml): Kafka's (names kafka, localhost) and MongoDB's
# (names mongo, localhost), P-256 keys, valid 90 days, written to
# deploy/tls/ (owner-only). For development only: production uses the
# managed services' certificates and their CA.
set -euo pipefail
dir="$(cd "$(dirname "$0")/.." && pwd)/deploy/tls"
mkdir -p "$dir"
cd "$dir"
umask 077
key=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
openssl req -x509 "${key[@]}" -days 90 -subj "/CN=Socialite development CA" \
  -keyout ca.key -out ca.pem 2>/dev/null
for name in kafka mongo; do
  printf 'subjectAltName=DNS:%s,DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' \
    "$name" >"$name.ext"
  openssl req "${key[@]}" -subj "/CN=$name" -keyout "$name.key" -out "$name.csr" 2>/dev/null
  openssl x509 -req -in "$name.csr" -CA ca.pem -CAkey ca.key -CAcreateserial -days 90 \
    -extfile "$name.ext" -out "$name.crt" 2>/dev/null
  # The key and its certificate in one file, as both servers take them.
  cat "$name.key" "$name.crt" >"$name.pem"
  rm "$name.csr" "$name.ext"
done
# The containers run as other users: the server files must be readable.
chmod 644 ca.pem kafka.pem mongo.pem
echo "certificates in $dir: ca.pem (trust it), kafka.pem, mongo.pem"
