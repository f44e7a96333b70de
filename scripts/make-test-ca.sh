#!/usr/bin/env bash
# Makes a throwaway certificate authority and one leaf certificate per role
# (master, node, client, admin) for tests and demos of the authenticated gRPC
# plane (docs/design/security.md). Not for production: the CA key sits next
# to the certificates it signed, and nothing here can revoke one.
set -euo pipefail

readonly PROG=make-test-ca.sh
readonly TRUST_DOMAIN=mooncake-tier
readonly ROLES=(master node client admin)

usage() {
  cat <<EOF
Usage: bash scripts/$PROG DIR [--san HOST_OR_IP ...] [--days N] [--force]

Writes into DIR (created if missing, mode 0700):
  ca.pem, ca.key              the CA (EC P-256, self-signed)
  ROLE.pem, ROLE.key          for ROLE in: ${ROLES[*]}
Every leaf has CN=ROLE and the SAN URI spiffe://$TRUST_DOMAIN/ROLE, which is
what the daemon reads the caller's role from. master and node are usable as
server and client (SANs: localhost, 127.0.0.1, ::1 and each --san); client
and admin as clients only. Keys are mode 0600.

Options:
  --san HOST_OR_IP  another DNS name or IP address for master and node
                    certificates (repeatable)
  --days N          validity in days of the CA and the leaves (default 30)
  --force           replace an existing DIR/ca.key and everything with it
  -h, --help        this text
EOF
}

die() { echo "$PROG: $*" >&2; exit 1; }

dir="" days=30 force=0
sans=()
while (($# > 0)); do
  case $1 in
    -h | --help) usage; exit 0 ;;
    --san) (($# >= 2)) || die "--san needs a value"; sans+=("$2"); shift 2 ;;
    --san=*) sans+=("${1#--san=}"); shift ;;
    --days) (($# >= 2)) || die "--days needs a value"; days=$2; shift 2 ;;
    --days=*) days=${1#--days=}; shift ;;
    --force) force=1; shift ;;
    -*) die "unknown option '$1' (see --help)" ;;
    *) [[ -z $dir ]] || die "one DIR only (got '$dir' and '$1')"; dir=$1; shift ;;
  esac
done
[[ -n $dir ]] || { usage >&2; exit 2; }
[[ $days =~ ^[1-9][0-9]{0,4}$ ]] || die "--days must be a whole number from 1 to 99999, not '$days'"

# Nothing is installed on the operator's behalf: Debian 12 ships openssl in
# its default install, so its absence is worth a clear word, not a fetch.
command -v openssl >/dev/null 2>&1 ||
  die "the openssl command is missing (Debian: apt-get install openssl)"

# The SANs go into an openssl config file, so only plain names and
# addresses pass: anything else could inject config lines.
san_lines="DNS.1 = localhost
IP.1 = 127.0.0.1
IP.2 = ::1"
n_dns=1 n_ip=2
for san in "${sans[@]}"; do
  if [[ $san =~ ^[0-9]{1,3}(\.[0-9]{1,3}){3}$ || ($san == *:* && $san =~ ^[0-9A-Fa-f:.]+$) ]]; then
    n_ip=$((n_ip + 1)); san_lines+=$'\n'"IP.$n_ip = $san"
  elif [[ $san =~ ^(\*\.)?[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*$ ]]; then
    n_dns=$((n_dns + 1)); san_lines+=$'\n'"DNS.$n_dns = $san"
  else
    die "--san '$san' is neither a DNS name nor an IP address"
  fi
done

if [[ -e $dir/ca.key && $force -eq 0 ]]; then
  die "$dir/ca.key exists; pass --force to replace it (certificates it signed stop being trusted)"
fi
# Keys are never readable by others, not even between creation and chmod;
# a DIR made here is the user's alone (mode 0700).
umask 077
mkdir -p -- "$dir"
# Work inside DIR: keys never sit in a shared /tmp, and the final renames
# stay on one file system (atomic).
work=$(mktemp -d "$dir/.make-test-ca.XXXXXX")
trap 'rm -rf -- "$work"' EXIT

# One config file for every step, so the host's /etc/ssl/openssl.cnf (and
# its default extensions) cannot add to or clash with what is asked here.
cat >"$work/openssl.cnf" <<EOF
[req]
distinguished_name = dn
prompt = no
[dn]
[ca_ext]
basicConstraints = critical, CA:TRUE, pathlen:0
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
EOF
for role in "${ROLES[@]}"; do
  # master and node serve TLS too (gRPC, HTTPS admin); client and admin
  # only connect. OpenSSL enforces the EKU in the handshake.
  eku="clientAuth" hosts=""
  if [[ $role == master || $role == node ]]; then eku="serverAuth, clientAuth" hosts=$san_lines; fi
  # Exactly one URI SAN: gRPC sets the peer_spiffe_id property only then.
  cat >>"$work/openssl.cnf" <<EOF
[leaf_$role]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = $eku
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid, issuer
subjectAltName = @san_$role
[san_$role]
URI.1 = spiffe://$TRUST_DOMAIN/$role
$hosts
EOF
done

newkey() {
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>"$work/err" ||
    die "cannot make a key $1: $(cat "$work/err")"
  chmod 0600 "$1"
}

# A random serial per certificate (no serial file to keep); 15 bytes stay
# within the 20 octets RFC 5280 allows.
serial() { echo "0x$(openssl rand -hex 15)"; }

# The CA is written under temporary names and renamed last, so a failure
# part way never leaves a ca.key that a rerun would refuse to replace.
newkey "$work/ca.key"
openssl req -config "$work/openssl.cnf" -new -x509 -key "$work/ca.key" \
  -subj "/O=$TRUST_DOMAIN/CN=$TRUST_DOMAIN test CA" -days "$days" \
  -set_serial "$(serial)" -extensions ca_ext -out "$work/ca.pem" 2>"$work/err" ||
  die "cannot make the CA: $(cat "$work/err")"

for role in "${ROLES[@]}"; do
  newkey "$work/$role.key"
  openssl req -config "$work/openssl.cnf" -new -key "$work/$role.key" \
    -subj "/O=$TRUST_DOMAIN/CN=$role" -out "$work/$role.csr" 2>"$work/err" ||
    die "cannot make the $role request: $(cat "$work/err")"
  openssl x509 -req -in "$work/$role.csr" -CA "$work/ca.pem" -CAkey "$work/ca.key" \
    -set_serial "$(serial)" -days "$days" -extfile "$work/openssl.cnf" \
    -extensions "leaf_$role" -out "$work/$role.pem" 2>"$work/err" ||
    die "cannot sign the $role certificate: $(cat "$work/err")"
  openssl verify -CAfile "$work/ca.pem" "$work/$role.pem" >/dev/null 2>"$work/err" ||
    die "the $role certificate does not verify: $(cat "$work/err")"
done

# Certificates are public: readable by the user's other tools (mode 0644).
for f in ca "${ROLES[@]}"; do
  chmod 0644 "$work/$f.pem"
  mv -f -- "$work/$f.pem" "$dir/$f.pem"
  [[ $f == ca ]] || mv -f -- "$work/$f.key" "$dir/$f.key"
done
mv -f -- "$work/ca.key" "$dir/ca.key"

echo "$PROG: CA and ${ROLES[*]} certificates in $dir, valid $days days"
echo "  master/node SANs: $(echo "$san_lines" | sed 's/^[A-Z]*\.[0-9]* = //' | paste -sd' ')"
