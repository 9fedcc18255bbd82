#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# One idempotent set-up for hdbbench on Debian 12: system packages, TimescaleDB built from Debian's
# source package against PostgreSQL 15, the project virtualenv, and the C++ build.
# Every step first checks whether its result is already there, so a second run takes seconds.
# A failing step names itself, says why and what to do, and the script exits non-zero.
set -Eeuo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache="$top/.cache/setup"
venv="$top/.venv"
pg_major=15
pg_config="/usr/lib/postgresql/$pg_major/bin/pg_config"

apt_packages=(
  # compilers and build tools for the subscriber and the TimescaleDB build
  g++ make cmake pkg-config dpkg-dev xz-utils
  # GoogleTest for the subscriber unit tests (ctest)
  libgtest-dev
  # cppTango 9.3 headers and libraries (pulls omniORB and ZeroMQ development files)
  libtango-dev
  # PostgreSQL 15 server, client and server headers (TimescaleDB is built against them)
  postgresql-15 postgresql-client-15 postgresql-server-dev-15 libpq-dev
  # MariaDB 10.11 server, client and the C connector (the subscriber and the Python driver use it)
  mariadb-server mariadb-client libmariadb-dev mariadb-backup
  # MyRocks storage engine, one of the disk-usage variants (hdbbench size measure)
  mariadb-plugin-rocksdb
  # Debian's C++ Tango database server (the optional --tango-db cpp), on the private MariaDB
  tango-db
  # Python virtualenv and headers (the MariaDB driver builds a C extension)
  python3-venv python3-dev
  # process and port tools used by the stack (ps, ss)
  procps iproute2
  # hosts: the ansible roles reach each host over ssh; the hosts test runs sshd in network namespaces
  openssh-server openssh-client
  # headless browser: the report tests check that report.html renders offline
  chromium
  # Prometheus 2.42: tests/test_metrics.py scrapes the subscriber's /metrics and hdbbench exporter with
  # a private instance (its own config and data directory, never the system service)
  prometheus
  # the Patroni cluster kind (hdbbench/stack/servers/patroni.py): Patroni (pinned, from PyPI: install_patroni;
  # Debian's package stays for patronictl on a facility's own cluster) runs three PostgreSQL members,
  # etcd 3.4 is its three-member consensus store, HAProxy 2.6 routes to the primary by Patroni's REST
  # health check; all run privately (own configs, data, ports), never as the system services
  patroni etcd-server haproxy
  # the what-if engines (no HDB++ library writes them; our subscriber's writers do, over HTTP with
  # libcurl): ClickHouse 18.16 and InfluxDB 1.6, run privately like the others, never as the services
  clickhouse-server influxdb libcurl4-openssl-dev
)
# The system services those packages enable at install, by package. hdbbench runs private instances,
# never the machine's (an enabled etcd.service would start at the next boot, listen on 2379 and keep
# data in /var/lib/etcd). Only the services of packages this set-up installed are disabled: an
# administrator's own haproxy, installed before, is left as it is.
declare -A system_services_to_disable=([etcd-server]=etcd [haproxy]=haproxy [patroni]=patroni
  [clickhouse-server]=clickhouse-server [influxdb]=influxdb)

sudo_cmd=()
current_step=""
step_started=0

die() {
  printf 'setup: step "%s" failed: %s\n' "$current_step" "$1" >&2
  [ $# -ge 2 ] && printf 'setup: what to do: %s\n' "$2" >&2
  exit 1
}
trap 'die "command failed (exit $?) at line $LINENO: $BASH_COMMAND" "read the output above; re-running is safe"' ERR

step() {
  current_step=$1
  step_started=$EPOCHREALTIME
  printf 'setup: %-28s ' "$1"
}
step_done() {
  printf '%s (%s s)\n' "$1" "$(awk -v a="$step_started" -v b="$EPOCHREALTIME" 'BEGIN{printf "%.1f", b-a}')"
}

need_privileges() {
  if [ "$(id -u)" -eq 0 ]; then
    sudo_cmd=()
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo_cmd=(sudo -n)
  else
    die "these Debian packages are missing and this user can neither install them (not root) nor use sudo without a password: $*" \
      "ask an administrator to run: apt-get install $*  (then re-run this command)"
  fi
}

missing_packages() {
  local pkg
  for pkg in "$@"; do
    if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
      printf '%s\n' "$pkg"
    fi
  done
}

install_system_packages() {
  step "Debian packages"
  mapfile -t missing < <(missing_packages "${apt_packages[@]}")
  if [ ${#missing[@]} -eq 0 ]; then
    step_done "present"
    return
  fi
  need_privileges "${missing[@]}"
  # policy-rc.d keeps Debian from starting system database services: hdbbench runs private ones.
  local policy=/usr/sbin/policy-rc.d created_policy=0
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' | "${sudo_cmd[@]}" tee "$policy" >/dev/null
    "${sudo_cmd[@]}" chmod +x "$policy"
    created_policy=1
  fi
  # tango-db must not configure a system database of its own: hdbbench loads its schema itself.
  echo "tango-db tango-db/dbconfig-install boolean false" | "${sudo_cmd[@]}" debconf-set-selections
  "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q >"$cache/apt-update.log" 2>&1 ||
    die "apt-get update failed (see $cache/apt-update.log)" "check that Debian's package registry is reachable"
  local attempt
  for attempt in 1 2 3; do
    # The image's apt hook can delete downloaded archives between dpkg runs; a retry succeeds.
    if "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
      "${missing[@]}" >"$cache/apt-install.log" 2>&1; then
      break
    fi
    [ "$attempt" -eq 3 ] && die "apt-get install ${missing[*]} failed three times (see $cache/apt-install.log)" \
      "read the log; a held or broken package must be repaired by hand"
  done
  [ "$created_policy" -eq 1 ] && "${sudo_cmd[@]}" rm -f "$policy"
  disable_system_services "${missing[@]}"
  step_done "installed ${#missing[@]}: ${missing[*]}"
}

# Debian enables the services of etcd-server, haproxy and patroni at install (policy-rc.d only kept
# them from starting then): stop and disable them, so that they never run beside the private ones.
# `systemctl disable` works without a running systemd too (it edits the links and the SysV rc.d links).
disable_system_services() {
  local pkg svc
  command -v systemctl >/dev/null 2>&1 || return 0
  for pkg in "$@"; do
    svc=${system_services_to_disable[$pkg]:-}
    [ -n "$svc" ] || continue
    if systemctl is-enabled --quiet "$svc.service" 2>/dev/null; then
      if [ -d /run/systemd/system ]; then
        "${sudo_cmd[@]}" systemctl disable --now --quiet "$svc.service" >/dev/null 2>&1 || true
      else
        "${sudo_cmd[@]}" systemctl disable --quiet "$svc.service" >/dev/null 2>&1 || true
      fi
    fi
  done
}

# The newest TimescaleDB that Debian packages as source and that still builds against PostgreSQL 15
# (2.29 dropped PostgreSQL 15). Debian's "+dfsg" source is the Apache-licensed edition.
timescaledb_installed_version() {
  local control
  control="$("$pg_config" --sharedir)/extension/timescaledb.control"
  [ -f "$control" ] && sed -n "s/^default_version = '\(.*\)'/\1/p" "$control"
}

install_timescaledb() {
  step "TimescaleDB (source build)"
  local have
  have=$(timescaledb_installed_version || true)
  if [ -n "$have" ] && [ -f "$("$pg_config" --pkglibdir)/timescaledb-$have.so" ]; then
    printf '%s\n' "$have" >"$cache/timescaledb-version"
    step_done "present ($have)"
    return
  fi
  need_privileges "(TimescaleDB install into $("$pg_config" --pkglibdir))"
  local aptdir="$cache/apt-src" src="$cache/timescaledb-src"
  mkdir -p "$aptdir/lists/partial" "$aptdir/cache" "$src"
  # A private apt configuration pointed at Debian's next suite for source packages only; the
  # mirror is the one this machine already uses, read from its own apt sources.
  local mirror
  mirror=$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
  [ -n "$mirror" ] || mirror=$(awk '$1=="deb"{for(i=2;i<=NF;i++) if ($i ~ /:\/\//) {print $i; exit}}' /etc/apt/sources.list 2>/dev/null || true)
  [ -n "$mirror" ] || die "no Debian mirror found in /etc/apt/sources.list(.d)" "configure apt for Debian first"
  printf 'deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] %s trixie main\n' "$mirror" >"$aptdir/sources.list"
  local aptopts=(-q -oDir::Etc::SourceList="$aptdir/sources.list" -oDir::Etc::SourceParts=/dev/null
    -oDir::State::Lists="$aptdir/lists" -oDir::Cache="$aptdir/cache" -oAPT::Sandbox::User=root)
  apt-get "${aptopts[@]}" update >"$cache/timescaledb-apt.log" 2>&1 ||
    die "could not read Debian's source index (see $cache/timescaledb-apt.log)" "check access to Debian's package registry"
  local version
  version=$(apt-cache "${aptopts[@]}" showsrc timescaledb 2>/dev/null | sed -n 's/^Version: //p' | sort -V | tail -n1)
  [ -n "$version" ] || die "Debian's source index offers no timescaledb package" "set up TimescaleDB by hand or use an external server"
  local upstream=${version%%+*}
  if [ "$(printf '%s\n2.29\n' "$upstream" | sort -V | head -n1)" = "2.29" ]; then
    die "Debian offers TimescaleDB $upstream, which no longer supports PostgreSQL $pg_major" \
      "use an external TimescaleDB server (see docs/stack.md, \"Your own servers\")"
  fi
  rm -rf "$src" && mkdir -p "$src"
  (cd "$src" && apt-get "${aptopts[@]}" source --download-only "timescaledb=$version" >>"$cache/timescaledb-apt.log" 2>&1) ||
    die "download of the timescaledb $version source failed (see $cache/timescaledb-apt.log)"
  (cd "$src" && dpkg-source -x ./*.dsc tree >>"$cache/timescaledb-apt.log" 2>&1) ||
    die "unpacking the timescaledb source failed (see $cache/timescaledb-apt.log)"
  cmake -S "$src/tree" -B "$src/build" -DPG_CONFIG="$pg_config" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DAPACHE_ONLY=ON -DREGRESS_CHECKS=OFF -DTAP_CHECKS=OFF -DUSE_TELEMETRY=OFF -DSEND_TELEMETRY_DEFAULT=OFF \
    -DWARNINGS_AS_ERRORS=OFF >"$cache/timescaledb-build.log" 2>&1 ||
    die "cmake configure of TimescaleDB failed (see $cache/timescaledb-build.log)"
  cmake --build "$src/build" -j "$(nproc)" >>"$cache/timescaledb-build.log" 2>&1 ||
    die "TimescaleDB build failed (see $cache/timescaledb-build.log)"
  "${sudo_cmd[@]}" cmake --install "$src/build" >>"$cache/timescaledb-build.log" 2>&1 ||
    die "TimescaleDB install failed (see $cache/timescaledb-build.log)"
  printf '%s\n' "$upstream" >"$cache/timescaledb-version"
  step_done "built and installed $upstream (Debian source $version)"
}

python_for_venv() {
  local py
  for py in python3.11 python3; do
    if command -v "$py" >/dev/null 2>&1 &&
      "$py" -c 'import sys, venv; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
      command -v "$py"
      return
    fi
  done
  die "no Python 3.11+ with the venv module found" "install python3 (3.11) and python3-venv"
}

install_virtualenv() {
  step "Python virtualenv"
  local wanted
  wanted=$(cat "$top/requirements.txt" "$top/pyproject.toml" | sha256sum | cut -d' ' -f1)
  if [ -x "$venv/bin/python" ] && [ "$(cat "$venv/.hdbbench-requirements" 2>/dev/null)" = "$wanted" ]; then
    step_done "present"
    return
  fi
  [ -x "$venv/bin/python" ] || "$(python_for_venv)" -m venv "$venv" >"$cache/venv.log" 2>&1 ||
    die "could not create $venv (see $cache/venv.log)" "install python3-venv"
  "$venv/bin/pip" install -q --disable-pip-version-check -r "$top/requirements.txt" >>"$cache/venv.log" 2>&1 ||
    die "pip install of requirements.txt failed (see $cache/venv.log)" "check access to PyPI; libmariadb-dev and python3-dev are needed to build the MariaDB driver"
  "$venv/bin/pip" install -q --disable-pip-version-check --no-deps --no-build-isolation -e "$top" >>"$cache/venv.log" 2>&1 ||
    "$venv/bin/pip" install -q --disable-pip-version-check --no-deps -e "$top" >>"$cache/venv.log" 2>&1 ||
    die "pip install -e of hdbbench failed (see $cache/venv.log)"
  printf '%s\n' "$wanted" >"$venv/.hdbbench-requirements"
  step_done "installed"
}

build_cpp() {
  step "C++ build (cmake)"
  if [ ! -f "$top/subscriber/CMakeLists.txt" ]; then
    step_done "nothing to build"
    return
  fi
  [ -f "$top/build/CMakeCache.txt" ] ||
    cmake -S "$top" -B "$top/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$cache/cmake.log" 2>&1 ||
    die "cmake configure failed (see $cache/cmake.log)" "libtango-dev, libpq-dev and libmariadb-dev must be installed"
  cmake --build "$top/build" -j "$(nproc)" >"$cache/cmake-build.log" 2>&1 ||
    die "C++ build failed (see $cache/cmake-build.log)" "fix the compile error shown in the log"
  # "present" when nothing was compiled or linked: a second set-up reports no change (ansible/).
  if grep -qE 'Building|Linking' "$cache/cmake-build.log"; then step_done "built"; else step_done "present"; fi
}

install_patroni() {
  step "Patroni (PyPI, pinned)"
  # The cluster kind's members run as the account `postgres` when set up by root: their Patroni lives
  # in a virtualenv of Debian's Python outside the clone (which may sit in a 0700 directory), in this
  # user's directory of server homes (hdbbench/stack/servers/homes.py: 0711 as root, else 0700).
  local user_root="/var/tmp/hdbbench-$(id -u)" dir wanted
  dir="$user_root/patroni"
  wanted=$(sha256sum "$top/scripts/patroni-requirements.txt" | cut -d' ' -f1)
  if [ -x "$dir/bin/patroni" ] && [ "$(cat "$dir/.hdbbench-requirements" 2>/dev/null)" = "$wanted" ]; then
    step_done "present ($("$dir/bin/patroni" --version 2>/dev/null))"
    return
  fi
  if [ ! -d "$user_root" ]; then
    mkdir -m "$([ "$(id -u)" = 0 ] && echo 0711 || echo 0700)" "$user_root" ||
      die "cannot create $user_root" "check that /var/tmp is writable"
  fi
  rm -rf "$dir"
  (umask 022 && /usr/bin/python3 -m venv "$dir") >"$cache/patroni.log" 2>&1 ||
    die "could not create $dir (see $cache/patroni.log)" "install python3-venv"
  (umask 022 && "$dir/bin/pip" install -q --disable-pip-version-check -r "$top/scripts/patroni-requirements.txt") \
    >>"$cache/patroni.log" 2>&1 || die "pip install of Patroni failed (see $cache/patroni.log)" "check access to PyPI"
  printf '%s\n' "$wanted" >"$dir/.hdbbench-requirements"
  step_done "installed $("$dir/bin/patroni" --version 2>/dev/null)"
}

main() {
  mkdir -p "$cache"
  local started
  started=$(date +%s)
  install_system_packages
  install_timescaledb
  install_virtualenv
  install_patroni
  build_cpp
  printf 'setup: done in %s s\n' "$(($(date +%s) - started))"
}

main "$@"
