#!/usr/bin/env bash
# deps.sh -- install what building and testing dal needs on Debian 12.
# Does nothing for packages already installed; needs root (or sudo) otherwise.
set -euo pipefail

pkgs=(build-essential autoconf automake libtool pkg-config
      default-libmysqlclient-dev libinih-dev check libedit-dev libssl-dev
      mariadb-server mariadb-client clang libclang-rt-14-dev python3 python3-pymysql sysbench curl
      openssl
      prometheus
      mariadb-test mariadb-test-data python3-mysqldb python3-sqlalchemy
      etcd-server etcd-client libcurl4-openssl-dev libjson-c-dev
      default-jdk-headless libmariadb-java libhikaricp-java libslf4j-java)
# Node and npm (tests/suites/connectors_test.sh installs mysql2 with npm): Debian's
# packages, unless a node with its own npm is already there (a nodejs
# package from elsewhere bundles npm and conflicts with Debian's npm)
command -v node >/dev/null || pkgs+=(nodejs)
command -v npm >/dev/null || pkgs+=(npm)

missing=()
for p in "${pkgs[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "deps.sh: need root to install: ${missing[*]}" >&2; exit 1; }
    sudo=sudo
fi
echo "deps.sh: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# openjdk's postinst links its man pages with update-alternatives, which
# fails where an image leaves /usr/share/man out (Debian's slim images)
$sudo mkdir -p /usr/share/man/man1
$sudo apt-get update -qq
# policy-rc.d keeps the package from starting a system-wide mariadb: the
# tests start their own throwaway servers
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
