#!/usr/bin/env bash
# Integration test of apps/sdp-testbed (needs root: network namespaces).
# Finds the tool via $SDP_TESTBED or relative to this file. Prints one line
# per check and, last, "N passed, M failed"; exits nonzero on any failure,
# 77 (skip) when not root or iproute2/ping are missing.
# SPDX-License-Identifier: BSD-3-Clause
# Single-quoted snippets below are run by `bash -c` with positional args.
# shellcheck disable=SC2016
set -uo pipefail

here=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
TB=${SDP_TESTBED:-$here/../../apps/sdp-testbed}
[[ -x $TB ]] || { echo "sdp-testbed not found/executable at $TB (set SDP_TESTBED)" >&2; exit 1; }

if [[ $(id -u) -ne 0 ]]; then echo "SKIP: needs root" >&2; exit 77; fi
for c in ip ping timeout; do
  command -v "$c" >/dev/null 2>&1 || { echo "SKIP: '$c' missing (apt-get install -y iproute2 iputils-ping coreutils)" >&2; exit 77; }
done

# Job ids unique to this test run: one letter + PID, at most 8 chars.
jid() { printf '%s%s' "$1" "$$" | cut -c1-8; }
JM=$(jid m)   # memif
JB=$(jid b)   # bridge, 3 hosts
JN=$(jid n)   # bridge with netem
JR=$(jid r)   # run wrapper
JS=$(jid s)   # run wrapper, SIGTERM
JF=$(jid f)   # failing up
ALL_JOBS=("$JM" "$JB" "$JN" "$JR" "$JS" "$JF")
TMP=$(mktemp -d /tmp/sdp-testbed-test.XXXXXX)
T_LIMIT=60   # seconds, bound for every tool invocation

passed=0
failed=0
ok()   { passed=$((passed + 1)); echo "ok - $*"; }
nok()  { failed=$((failed + 1)); echo "not ok - $*"; }
check() { # description command...
  local d=$1
  shift
  if "$@"; then ok "$d"; else nok "$d"; fi
}

tb() { timeout "$T_LIMIT" "$TB" "$@"; }

cleanup() {
  local j
  for j in "${ALL_JOBS[@]}"; do
    timeout "$T_LIMIT" "$TB" down --job "$j" --kill-procs >/dev/null 2>&1 || true
  done
  rm -rf -- "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

job_ns_count() { ip netns list | awk '{print $1}' | grep -c "^sdp-$1-" || true; }
no_ns() { [[ $(job_ns_count "$1") -eq 0 ]]; }
kv() { # file key -> value
  sed -n "s/^$2=//p" "$1" | head -n1
}
ping_ok() { ip netns exec "$1" ping -n -c 2 -W 2 "$2" >/dev/null 2>&1; }
ping_fails() { ! ip netns exec "$1" ping -n -c 2 -W 1 "$2" >/dev/null 2>&1; }
rtt_min_at_least() { # ns addr ms
  local out min
  out=$(ip netns exec "$1" ping -n -c 3 -W 3 "$2" 2>&1) || { echo "$out" >&2; return 1; }
  min=$(sed -n 's#^rtt min/avg/max/mdev = \([0-9.]*\)/.*#\1#p' <<<"$out")
  echo "  (rtt min ${min:-?} ms, need >= $3)"
  [[ -n $min ]] && awk -v m="$min" -v t="$3" 'BEGIN { exit !(m >= t) }'
}
mtu_of() { ip -n "$1" -o link show dev "$2" | sed -n 's/.* mtu \([0-9]*\) .*/\1/p'; }

echo "# sdp-testbed: $TB; jobs ${ALL_JOBS[*]}"

# ---------------------------------------------------------------- job ids
out=$("$TB" memif up --job 'bad-id!' 2>&1); rc=$?
check "invalid job id rejected with usage status 2" test "$rc" -eq 2
check "invalid job id error names --job and a fix" grep -q -- "--job 'bad-id!' is invalid.*Fix" <<<"$out"
out=$("$TB" bridge up --job abcdefghi --hosts 2 2>&1); rc=$?
check "9-character job id rejected" test "$rc" -eq 2
out=$("$TB" bridge up --hosts 2 2>&1); rc=$?
check "missing --job rejected" test "$rc" -eq 2

# ---------------------------------------------------------------- memif
tb memif up --job "$JM" --mtu 9000 >"$TMP/memif.env"; rc=$?
check "memif up succeeds" test "$rc" -eq 0
check "memif dir /run/sdp/$JM exists with mode 700" test "$(stat -c %a "/run/sdp/$JM" 2>/dev/null)" = 700
sock=/run/sdp/$JM/memif0.sock
check "SDP_MEMIF_SOCK printed" test "$(kv "$TMP/memif.env" SDP_MEMIF_SOCK)" = "$sock"
check "SDP_VDEV_0 is the server end with bsize for MTU 9000" \
  test "$(kv "$TMP/memif.env" SDP_VDEV_0)" = "net_memif0,role=server,id=0,socket=$sock,socket-abstract=no,bsize=10240"
check "SDP_VDEV_1 is the client end" \
  test "$(kv "$TMP/memif.env" SDP_VDEV_1)" = "net_memif0,role=client,id=0,socket=$sock,socket-abstract=no,bsize=10240"
check "memif output is shell-evaluable" bash -c 'set -eu; eval "$(cat "$1")"; [[ $SDP_JOB == "$2" ]]' _ "$TMP/memif.env" "$JM"
out=$(tb memif up --job "$JM" --mtu 1500)
check "no bsize at MTU 1500" bash -c '! grep -q bsize <<<"$1"' _ "$out"
mkdir -p "/var/run/dpdk/sdp-$JM-r0"
tb memif down --job "$JM"; rc=$?
check "memif down succeeds" test "$rc" -eq 0
check "memif down removes /run/sdp/$JM" test ! -e "/run/sdp/$JM"
check "memif down removes /var/run/dpdk/sdp-$JM-*" test ! -e "/var/run/dpdk/sdp-$JM-r0"
tb memif down --job "$JM"; rc=$?
check "memif down is idempotent" test "$rc" -eq 0

# ---------------------------------------------------------------- bridge, 3 hosts
tb bridge up --job "$JB" --hosts 3 --kernel-ip --mtu 1400 >"$TMP/b.env"; rc=$?
check "bridge up 3 hosts succeeds" test "$rc" -eq 0
check "4 namespaces (3 hosts + switch)" test "$(job_ns_count "$JB")" -eq 4
oct=$(kv "$TMP/b.env" SDP_JOB_OCTET)
check "job octet in 20..219" test "${oct:-0}" -ge 20 -a "${oct:-0}" -le 219
for i in 0 1 2; do
  check "host $i: SDP_NS/DP_IP/KERNEL_IP/VDEV printed" test \
    "$(kv "$TMP/b.env" "SDP_NS_$i")" = "sdp-$JB-h$i" -a \
    "$(kv "$TMP/b.env" "SDP_DP_IP_$i")" = "10.$oct.1.$((i + 1))" -a \
    "$(kv "$TMP/b.env" "SDP_KERNEL_IP_$i")" = "10.$oct.0.$((i + 1))" -a \
    "$(kv "$TMP/b.env" "SDP_VDEV_$i")" = "net_af_packet0,iface=sdpnet0,qdisc_bypass=1" -a \
    "$(kv "$TMP/b.env" "SDP_VDEV_XDP_$i")" = "net_af_xdp0,iface=sdpnet0,start_queue=0,queue_count=1"
  check "host $i: SDP_MAC matches sdpnet0" test "$(kv "$TMP/b.env" "SDP_MAC_$i")" = \
    "$(ip netns exec "sdp-$JB-h$i" cat /sys/class/net/sdpnet0/address)"
  check "host $i: MTU 1400 on sdpnet0 and h$i" test "$(mtu_of "sdp-$JB-h$i" sdpnet0)" = 1400 -a "$(mtu_of "sdp-$JB-sw" "h$i")" = 1400
  check "host $i: kernel address on sdpnet0, DPDK address not" bash -c \
    'a=$(ip -n "$1" -o -4 addr show dev sdpnet0); grep -q "$2/24" <<<"$a" && ! grep -q "$3" <<<"$a"' _ \
    "sdp-$JB-h$i" "10.$oct.0.$((i + 1))" "10.$oct.1."
done
check "br0 MTU 1400" test "$(mtu_of "sdp-$JB-sw" br0)" = 1400
if [[ -d /proc/sys/net/ipv6 ]]; then
  check "IPv6 disabled on sdpnet0" test "$(ip netns exec "sdp-$JB-h0" sysctl -n net.ipv6.conf.sdpnet0.disable_ipv6)" = 1
fi
check "ping h0 -> h1" ping_ok "sdp-$JB-h0" "10.$oct.0.2"
check "ping h0 -> h2" ping_ok "sdp-$JB-h0" "10.$oct.0.3"
check "ping h2 -> h1" ping_ok "sdp-$JB-h2" "10.$oct.0.2"
out=$(tb bridge exec --job "$JB" --host 1 -- ip -o -4 addr show dev sdpnet0)
check "bridge exec runs inside host 1" grep -q "10.$oct.0.2/24" <<<"$out"
tb status --job "$JB" >"$TMP/status" 2>&1; rc=$?
check "status of a running job returns 0" test "$rc" -eq 0
out=$(tb env --job "$JB" --export)
check "env --export re-prints the variables" grep -qx "export SDP_NS_2=sdp-$JB-h2" <<<"$out"
out=$(tb bridge up --job "$JB" --hosts 2 2>&1); rc=$?
check "second bridge up of a running job refused" test "$rc" -ne 0
mkdir -p "/var/run/dpdk/sdp-$JB-h0"
tb bridge down --job "$JB"; rc=$?
check "bridge down succeeds" test "$rc" -eq 0
check "bridge down leaves no sdp-$JB-* namespaces" no_ns "$JB"
check "bridge down removes /run/sdp/$JB and DPDK dirs" test ! -e "/run/sdp/$JB" -a ! -e "/var/run/dpdk/sdp-$JB-h0"
tb bridge down --job "$JB"; rc=$?
check "bridge down is idempotent" test "$rc" -eq 0
tb status --job "$JB" >/dev/null 2>&1; rc=$?
check "status of a job that is down returns 3" test "$rc" -eq 3

# ---------------------------------------------------------------- netem
tb bridge up --job "$JN" --hosts 2 --kernel-ip --netem "loss 100%" >"$TMP/n.env"; rc=$?
check "bridge up with --netem 'loss 100%' succeeds" test "$rc" -eq 0
oct=$(kv "$TMP/n.env" SDP_JOB_OCTET)
echo "# impairment backend: $(kv "$TMP/n.env" SDP_IMPAIR_BACKEND)"
check "ping fails with loss 100%" ping_fails "sdp-$JN-h0" "10.$oct.0.2"
tb bridge netem --job "$JN" --host all "delay 20ms"; rc=$?
check "bridge netem replace with 'delay 20ms' succeeds" test "$rc" -eq 0
check "RTT >= 40 ms with 20 ms one-way delay on both ports" rtt_min_at_least "sdp-$JN-h0" "10.$oct.0.2" 40
tb bridge netem --job "$JN" --host 0 none; rc=$?
check "bridge netem --host 0 none succeeds" test "$rc" -eq 0
check "RTT >= 20 ms with the delay on host 1's port only" rtt_min_at_least "sdp-$JN-h0" "10.$oct.0.2" 20
tb status --job "$JN" >"$TMP/status" 2>&1
check "status shows per-host impairment" bash -c 'grep -q "host 0 .*impair=none" "$1" && grep -q "host 1 .*impair=delay 20ms" "$1"' _ "$TMP/status"
if [[ $(kv "$TMP/n.env" SDP_IMPAIR_BACKEND) == user ]]; then
  # a rate alone is shaped by the kernel's token bucket, not the forwarder
  tb bridge netem --job "$JN" --host 1 "rate 200mbit"; rc=$?
  check "bridge netem 'rate 200mbit' succeeds" test "$rc" -eq 0
  check "rate alone: tbf on h1, no forwarder for host 1" bash -c \
    'ip netns exec "sdp-$1-sw" tc qdisc show dev h1 | grep -q "tbf.*rate 200Mbit" &&
     ! pgrep -f "sdp-impair $1 h1 " >/dev/null' _ "$JN"
  tb bridge netem --job "$JN" --host 1 "delay 20ms"; rc=$?
  check "back to a delay: forwarder again, tbf gone" bash -c \
    '[[ $2 -eq 0 ]] && ! ip netns exec "sdp-$1-sw" tc qdisc show dev h1 | grep -q tbf &&
     pgrep -f "sdp-impair $1 h1 " >/dev/null' _ "$JN" "$rc"
fi
out=$(tb bridge netem --job "$JN" --host 5 "delay 1ms" 2>&1); rc=$?
check "bridge netem rejects an out-of-range host" test "$rc" -eq 2
tb bridge down --job "$JN"; rc=$?
check "bridge down with impairment succeeds and leaves no namespaces" bash -c '[[ $1 -eq 0 ]] && ! ip netns list | grep -q "^sdp-$2-"' _ "$rc" "$JN"
check "no impairment process of the job remains" bash -c '! pgrep -f "sdp-impair $1 " >/dev/null' _ "$JN"

# ---------------------------------------------------------------- failing up cleans up
out=$(tb bridge up --job "$JF" --hosts 2 --netem "delay 10ms nonsense 3" 2>&1); rc=$?
check "bridge up with bad netem args fails" test "$rc" -ne 0
check "failed bridge up leaves nothing behind" bash -c '! ip netns list | grep -q "^sdp-$1-" && [[ ! -e /run/sdp/$1 ]]' _ "$JF"

# ---------------------------------------------------------------- run wrapper
tb run --job "$JR" bridge --hosts 2 --kernel-ip -- bash -c \
  'ip netns exec "$SDP_NS_0" ping -n -c 1 -W 2 "$SDP_KERNEL_IP_1" >/dev/null && [[ -n $SDP_VDEV_1 ]] && exit 7; exit 1'
rc=$?
check "run propagates CMD's exit status (7) and CMD saw the testbed" test "$rc" -eq 7
check "run tore down after CMD failed" bash -c '! ip netns list | grep -q "^sdp-$1-" && [[ ! -e /run/sdp/$1 ]]' _ "$JR"

tb run --job "$JR" memif -- bash -c '[[ -d $SDP_RUN_DIR && $SDP_VDEV_0 == *role=server* ]]'; rc=$?
check "run memif exports variables, status 0" test "$rc" -eq 0
check "run memif removed its directory" test ! -e "/run/sdp/$JR"

"$TB" run --job "$JS" bridge --hosts 2 -- bash -c 'echo $$ >"$1"; exec sleep 300' _ "$TMP/cmd.pid" &
runpid=$!
for _ in $(seq 100); do [[ -s $TMP/cmd.pid ]] && break; sleep 0.1; done
check "run started CMD inside the testbed" test "$(job_ns_count "$JS")" -eq 3
kill -TERM "$runpid"
rc=0
for _ in $(seq 300); do kill -0 "$runpid" 2>/dev/null || break; sleep 0.1; done
wait "$runpid" || rc=$?
check "run killed with SIGTERM exits 143" test "$rc" -eq 143
check "run killed with SIGTERM tore down" bash -c '! ip netns list | grep -q "^sdp-$1-" && [[ ! -e /run/sdp/$1 ]]' _ "$JS"
cmdpid=$(cat "$TMP/cmd.pid" 2>/dev/null)
check "run killed with SIGTERM stopped CMD" bash -c '! kill -0 "$1" 2>/dev/null || grep -q "^State:.*Z" "/proc/$1/status"' _ "${cmdpid:-0}"

tb run --job "$JR" --timeout 1 memif -- sleep 30; rc=$?
check "run --timeout returns 124 and tears down" bash -c '[[ $1 -eq 124 && ! -e /run/sdp/$2 ]]' _ "$rc" "$JR"

echo "$passed passed, $failed failed"
((failed == 0))
