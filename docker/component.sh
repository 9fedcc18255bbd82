#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The entry point of every container of docker/compose.yaml:
#   component.sh servers|devices|subscribers <address>   start this host's components, stay in the foreground
#   component.sh controller                               run the scenario against them, keep the run directory
# The servers container writes servers.json (addresses, ports, passwords) into the shared state
# volume; the others wait for it.
set -euo pipefail
top=/opt/hdbbench
scenario=${HDBBENCH_SCENARIO:-$top/scenarios/hosts.toml}
hosts=${HDBBENCH_HOSTS_FILE:-$top/docker/hosts.toml}
state=/state
servers_file=$state/servers/servers.json
role=${1:?usage: component.sh servers|devices|subscribers <address> | controller}

wait_for_servers() {
  for _ in $(seq 1 120); do [ -s "$servers_file" ] && return; sleep 1; done
  echo "component.sh: $servers_file did not appear (is the servers container up?)" >&2
  exit 1
}
tango_host() { "$top/.venv/bin/python" -c 'import json,sys; print(json.load(open(sys.argv[1]))["HDBBENCH_TANGO_HOST"])' "$servers_file"; }

case "$role" in
  servers)
    exec "$top/.venv/bin/hdbbench" hosts up servers "$scenario" --hosts "$hosts" --address "${2:?address}" \
      --state-dir "$state/servers" --foreground ;;
  devices|subscribers)
    wait_for_servers
    exec "$top/.venv/bin/hdbbench" hosts up "$role" "$scenario" --hosts "$hosts" --address "${2:?address}" \
      --tango-host "$(tango_host)" --state-dir "$state/$role-${2}" --foreground ;;
  controller)
    wait_for_servers
    eval "$("$top/.venv/bin/python" -c 'import json,shlex,sys
for k, v in json.load(open(sys.argv[1])).items(): print(f"export {k}={shlex.quote(v)}")' "$servers_file")"
    exec "$top/.venv/bin/hdbbench" run "$scenario" --hosts "$hosts" --state-dir "$state/controller" --runs /runs ;;
  *) echo "component.sh: unknown role $role" >&2; exit 2 ;;
esac
