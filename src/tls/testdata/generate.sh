#!/usr/bin/env bash
# Makes the test-only certificates and keys in this folder (committed; the tests embed them).
# Run it again only to change them: `src/tls/testdata/generate.sh`. Needs the openssl command
# (Debian's openssl package; .ci/run installs it). Nothing here is secret: these keys sign
# nothing but tests.
#
#   ca.pem              root CA (ECDSA P-256), what clients in the tests trust
#   intermediate.pem    intermediate CA signed by the root; it signs every leaf below
#   rsa.pem/.key        leaf, RSA 2048: rsa.test, www.rsa.test          (leaf + intermediate)
#   ecdsa.pem/.key      leaf, ECDSA P-256: ecdsa.test, *.wild.test      (leaf + intermediate)
#   dual-rsa.pem/.key   leaf, RSA 2048: dual.test         } the same name with both key types
#   dual-ecdsa.pem/.key leaf, ECDSA P-256: dual.test      }
#   cn-only.pem/.key    leaf with no subjectAltName, CN=cn-only.test     (leaf + intermediate)
#   client.pem/.key     client certificate (clientAuth)                 (leaf + intermediate)
#   expired.pem/.key    leaf valid from 2020-01-01 to 2021-01-01         (leaf + intermediate)
#   wrong-order.pem     ecdsa.pem's two certificates, intermediate first
#   encrypted.key       ecdsa.key encrypted with the passphrase "test"
#   encrypted-traditional.key  the same, in the traditional format ("Proc-Type: 4,ENCRYPTED")
#   untrusted.pem/.key  leaf for untrusted.test signed by another root, not ca.pem (leaf only)
#   ecdsa.ocsp.der      an OCSP response for ecdsa.pem: good, signed by the intermediate
# Validity: 100 years, except expired.pem.
set -euo pipefail
cd "$(dirname "$0")"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
days=36500

ec_key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1"; }
rsa_key() { openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$1" 2>/dev/null; }

# ca NAME SUBJECT SIGNER_PEM SIGNER_KEY: a CA certificate (self-signed when SIGNER is "self").
ca() {
    local name=$1 subject=$2 signer=$3 signer_key=$4
    ec_key "$name.key.tmp"
    printf 'basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\nsubjectKeyIdentifier=hash\n' >"$work/$name.ext"
    openssl req -new -key "$name.key.tmp" -subj "$subject" -out "$work/$name.csr"
    if [ "$signer" = self ]; then
        openssl x509 -req -in "$work/$name.csr" -signkey "$name.key.tmp" -days $days \
            -extfile "$work/$name.ext" -out "$work/$name.pem" 2>/dev/null
    else
        echo 'authorityKeyIdentifier=keyid' >>"$work/$name.ext"
        openssl x509 -req -in "$work/$name.csr" -CA "$signer" -CAkey "$signer_key" \
            -CAcreateserial -days $days -extfile "$work/$name.ext" -out "$work/$name.pem" 2>/dev/null
    fi
}

# leaf NAME KEY_KIND SUBJECT SAN USAGE [ISSUER]: NAME.key, and NAME.pem with the issuer's
# certificate after the leaf (the chain a server sends), unless the issuer is a root.
leaf() {
    local name=$1 kind=$2 subject=$3 san=$4 usage=$5 issuer=${6:-intermediate}
    "${kind}_key" "$name.key"
    {
        echo 'basicConstraints=critical,CA:FALSE'
        echo "extendedKeyUsage=$usage"
        echo 'authorityKeyIdentifier=keyid'
        [ -n "$san" ] && echo "subjectAltName=$san"
    } >"$work/$name.ext"
    openssl req -new -key "$name.key" -subj "$subject" -out "$work/$name.csr"
    openssl x509 -req -in "$work/$name.csr" -CA "$work/$issuer.pem" -CAkey "$work/$issuer.key" \
        -CAcreateserial -days $days -extfile "$work/$name.ext" -out "$work/$name.pem" 2>/dev/null
    if [ "$issuer" = intermediate ]; then
        cat "$work/$name.pem" "$work/$issuer.pem" >"$name.pem"
    else
        cp "$work/$name.pem" "$name.pem"
    fi
}

ca ca "/CN=sluice test root" self ""
mv ca.key.tmp "$work/ca.key"; cp "$work/ca.pem" ca.pem
ca intermediate "/CN=sluice test intermediate" "$work/ca.pem" "$work/ca.key"
mv intermediate.key.tmp "$work/intermediate.key"; cp "$work/intermediate.pem" intermediate.pem
ca other "/CN=sluice test other root" self ""
mv other.key.tmp "$work/other.key"

leaf rsa rsa "/CN=rsa.test" "DNS:rsa.test,DNS:www.rsa.test" serverAuth
leaf ecdsa ec "/CN=ecdsa.test" "DNS:ecdsa.test,DNS:*.wild.test" serverAuth
leaf dual-rsa rsa "/CN=dual.test" "DNS:dual.test" serverAuth
leaf dual-ecdsa ec "/CN=dual.test" "DNS:dual.test" serverAuth
leaf cn-only ec "/CN=cn-only.test" "" serverAuth
leaf client ec "/CN=sluice test client" "" clientAuth
leaf untrusted ec "/CN=untrusted.test" "DNS:untrusted.test" serverAuth other

# Expired: `openssl ca` is the command that takes explicit dates.
ec_key expired.key
mkdir -p "$work/db"; : >"$work/db/index.txt"; echo 1000 >"$work/db/serial"
cat >"$work/ca.cnf" <<CNF
[ca]
default_ca = test
[test]
database = $work/db/index.txt
serial = $work/db/serial
new_certs_dir = $work/db
default_md = sha256
policy = any
copy_extensions = none
x509_extensions = leaf
[any]
commonName = supplied
[leaf]
basicConstraints = critical,CA:FALSE
extendedKeyUsage = serverAuth
subjectAltName = DNS:expired.test
CNF
openssl req -new -key expired.key -subj "/CN=expired.test" -out "$work/expired.csr"
openssl ca -batch -config "$work/ca.cnf" -cert intermediate.pem -keyfile "$work/intermediate.key" \
    -startdate 20200101000000Z -enddate 20210101000000Z -in "$work/expired.csr" \
    -out "$work/expired.pem" -notext 2>/dev/null
cat "$work/expired.pem" intermediate.pem >expired.pem

# Out of order: the intermediate before the leaf it issued.
awk '/BEGIN CERT/{n++} {print > ("'"$work"'/part" n ".pem")}' ecdsa.pem
cat "$work/part2.pem" "$work/part1.pem" >wrong-order.pem

openssl pkey -in ecdsa.key -aes256 -passout pass:test -out encrypted.key
openssl ec -in ecdsa.key -aes128 -passout pass:test -out encrypted-traditional.key

# OCSP: the intermediate answers for ecdsa.pem's leaf, good for 100 years.
serial="$(openssl x509 -in ecdsa.pem -noout -serial | cut -d= -f2)"
subject="$(openssl x509 -in ecdsa.pem -noout -subject -nameopt compat | sed 's/^subject=//')"
printf 'V\t%s\t\t%s\tunknown\t%s\n' "21241231000000Z" "$serial" "$subject" >"$work/ocsp-index.txt"
openssl ocsp -index "$work/ocsp-index.txt" -rsigner intermediate.pem -rkey "$work/intermediate.key" \
    -CA intermediate.pem -issuer intermediate.pem -cert ecdsa.pem -ndays $days \
    -respout ecdsa.ocsp.der >/dev/null 2>&1
openssl ocsp -respin ecdsa.ocsp.der -issuer intermediate.pem -cert ecdsa.pem -noverify -resp_text 2>/dev/null \
    | grep -q "ecdsa.pem: good" || { echo "generate.sh: the OCSP response is not good" >&2; exit 1; }
rm -f ./*.srl
echo "generate.sh: made $(ls | wc -l) files in $(pwd)"
