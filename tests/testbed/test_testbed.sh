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
JL=$(jid l)   # bridge, 3 rails
JK=$(jid k)   # memif, 3 rails
JE=$(jid e)   # failing up with rails
ALL_JOBS=("$JM" "$JB" "$JN" "$JR" "$JS" "$JF" "$JL" "$JK" "$JE")
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
out=$(tb memif up --job "$JM" --mtu 9000 --memif-zc)
check "--memif-zc: the client end asks for zero-copy" \
  test "$(kv <(echo "$out") SDP_VDEV_1)" = "net_memif0,role=client,id=0,socket=$sock,socket-abstract=no,bsize=10240,zero-copy=yes"
check "--memif-zc: the server end does not" \
  test "$(kv <(echo "$out") SDP_VDEV_0)" = "net_memif0,role=server,id=0,socket=$sock,socket-abstract=no,bsize=10240"
out=$("$TB" bridge up --job "$JB" --hosts 2 --memif-zc 2>&1); rc=$?
check "--memif-zc on a bridge: usage status 2, naming memif" bash -c '[[ $1 -eq 2 ]] && grep -q -- "--memif-zc needs a memif testbed" <<<"$2"' _ "$rc" "$out"
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
# A switch runs no host firewall: bridged frames skip iptables & co (a
# per-frame cost on every af_packet frame); kernels without br_netfilter
# have neither the sysctls nor the walk.
check "switch: bridged frames not passed to iptables/ip6tables/arptables" bash -c \
  'if [[ ! -e /proc/sys/net/bridge ]]; then ! ip netns exec "$1" test -e /proc/sys/net/bridge/bridge-nf-call-iptables; exit; fi
   for k in iptables ip6tables arptables; do
     [[ $(ip netns exec "$1" sysctl -n net.bridge.bridge-nf-call-$k) == 0 ]] || exit 1
   done' _ "sdp-$JB-sw"
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

# ---------------------------------------------------------------- rails
# nothing of a job left: namespaces, veths, run dir, memif sockets, DPDK dirs
nothing_left() { # job
  ! ip netns list | grep -q "^sdp-$1-" && [[ ! -e /run/sdp/$1 ]] &&
    ! compgen -G "/var/run/dpdk/sdp-$1-*" >/dev/null &&
    ! ip -o link show | grep -q "sdpnet\|@.*sdp-$1" &&
    ! pgrep -f "sdp-impair $1 " >/dev/null
}
ping_rail() { # job oct host rail peer
  ping_ok "sdp-$1-h$3" "10.$2.$((2 * $4)).$(($5 + 1))"
}
tb memif up --job "$JK" --rails 1 >"$TMP/k1.env"
check "memif --rails 1 prints exactly the single-path variables" bash -c \
  'diff <(sed "s#$2#J#g" "$1") <(sed "s#$3#J#g" "$4")' _ "$TMP/k1.env" "$JK" "$JM" "$TMP/memif.env"
tb memif up --job "$JK" --rails 3 --mtu 1500 >"$TMP/k.env"; rc=$?
check "memif up --rails 3 succeeds" test "$rc" -eq 0
check "memif rails: SDP_RAILS=3" test "$(kv "$TMP/k.env" SDP_RAILS)" = 3
for r in 0 1 2; do
  check "memif rail $r: own socket and vdev name for both ends" test \
    "$(kv "$TMP/k.env" "SDP_VDEV_0_$r")" = "net_memif$r,role=server,id=0,socket=/run/sdp/$JK/memif$r.sock,socket-abstract=no" -a \
    "$(kv "$TMP/k.env" "SDP_VDEV_1_$r")" = "net_memif$r,role=client,id=0,socket=/run/sdp/$JK/memif$r.sock,socket-abstract=no" -a \
    "$(kv "$TMP/k.env" "SDP_MEMIF_SOCK_$r")" = "/run/sdp/$JK/memif$r.sock"
done
out=$(tb rail-down "$JK" 1 2>&1); rc=$?
check "rail-down on memif fails and says why" bash -c '[[ $1 -ne 0 ]] && grep -q "cannot cut it; use a bridge or vhost testbed" <<<"$2"' _ "$rc" "$out"
: >"/run/sdp/$JK/memif2.sock"; mkdir -p "/var/run/dpdk/sdp-$JK-r1"
tb down --job "$JK"; rc=$?
check "memif rails: down removes every socket, the dir and DPDK dirs" bash -c '[[ $1 -eq 0 ]]' _ "$rc"
check "memif rails: nothing left" nothing_left "$JK"

out=$(tb bridge up --job "$JL" --hosts 2 --rails 9 2>&1); rc=$?
check "--rails 9 rejected with usage status 2, naming --rails" bash -c '[[ $1 -eq 2 ]] && grep -q -- "--rails .9. is invalid" <<<"$2"' _ "$rc" "$out"
out=$(tb bridge up --job "$JL" --hosts 2 --rails 2 --netem-rail 2 "rate 1mbit" 2>&1); rc=$?
check "--netem-rail beyond --rails rejected" bash -c '[[ $1 -eq 2 ]] && grep -q "rail index out of range" <<<"$2"' _ "$rc" "$out"
out=$(tb vhost up --job "$JL" --hosts 2 --rails 9 2>&1); rc=$?
check "vhost --rails 9 rejected with usage status 2, naming --rails" bash -c '[[ $1 -eq 2 ]] && grep -q -- "--rails .9. is invalid" <<<"$2"' _ "$rc" "$out"
out=$(tb vhost up --job "$JL" --hosts 200 --rails 2 2>&1); rc=$?
check "vhost --hosts 200 --rails 2 rejected: 400 ports, over the switch's sizing" bash -c '[[ $1 -eq 2 ]] && grep -q "makes 400 vhost ports" <<<"$2"' _ "$rc" "$out"
out=$(tb vhost up --job "$JL" --hosts 2 --rails 2 --netem-rail 1 "rate 1mbit" 2>&1); rc=$?
check "vhost --netem-rail rejected, naming the bridge testbed" bash -c '[[ $1 -eq 2 ]] && grep -q "need a bridge testbed" <<<"$2"' _ "$rc" "$out"
check "rejected up left nothing" nothing_left "$JL"
tb bridge up --job "$JL" --hosts 2 --rails 3 --kernel-ip \
  --netem-rail 1 "delay 1ms" --netem-rail 2 "rate 200mbit" >"$TMP/l.env"; rc=$?
check "bridge up --rails 3 (rail 1 forwarded, rail 2 tbf) succeeds" test "$rc" -eq 0
oct=$(kv "$TMP/l.env" SDP_JOB_OCTET)
check "bridge rails: SDP_RAILS=3, 3 namespaces" test "$(kv "$TMP/l.env" SDP_RAILS)" = 3 -a "$(job_ns_count "$JL")" -eq 3
check "bridge rails: rail 0 variables are the single-path ones" test \
  "$(kv "$TMP/l.env" SDP_DP_IP_1_0)" = "$(kv "$TMP/l.env" SDP_DP_IP_1)" -a \
  "$(kv "$TMP/l.env" SDP_VDEV_1_0)" = "$(kv "$TMP/l.env" SDP_VDEV_1)"
for r in 0 1 2; do
  for h in 0 1; do
    check "host $h rail $r: sdpnet$r, own subnet, own vdev name, MAC matches" test \
      "$(kv "$TMP/l.env" "SDP_IF_${h}_$r")" = "sdpnet$r" -a \
      "$(kv "$TMP/l.env" "SDP_DP_IP_${h}_$r")" = "10.$oct.$((2 * r + 1)).$((h + 1))" -a \
      "$(kv "$TMP/l.env" "SDP_KERNEL_IP_${h}_$r")" = "10.$oct.$((2 * r)).$((h + 1))" -a \
      "$(kv "$TMP/l.env" "SDP_VDEV_${h}_$r")" = "net_af_packet$r,iface=sdpnet$r,blocksz=36864,framesz=9216,qdisc_bypass=1" -a \
      "$(kv "$TMP/l.env" "SDP_MAC_${h}_$r")" = "$(ip netns exec "sdp-$JL-h$h" cat /sys/class/net/sdpnet$r/address)"
  done
  check "rail $r carries traffic (ping h0 -> h1 on 10.$oct.$((2 * r)).2)" ping_rail "$JL" "$oct" 0 "$r" 1
done
check "rails are separate: rail 1's address is not reachable over rail 0 only" bash -c \
  '[[ $(ip -n "sdp-$1-h0" -o -4 addr show dev sdpnet0 | wc -l) -eq 1 ]] && ip -n "sdp-$1-h0" route get "10.$2.2.2" | grep -q "dev sdpnet1"' _ "$JL" "$oct"
check "--netem-rail 2 'rate 200mbit': tbf on both rail-2 ports, not on rails 0/1" bash -c \
  'for p in h0r2 h1r2; do ip netns exec "sdp-$1-sw" tc qdisc show dev $p | grep -q "tbf.*rate 200Mbit" || exit 1; done
   ! ip netns exec "sdp-$1-sw" tc qdisc show dev h0 | grep -q tbf && ! ip netns exec "sdp-$1-sw" tc qdisc show dev h0r1 | grep -q tbf' _ "$JL"
if [[ $(kv "$TMP/l.env" SDP_IMPAIR_BACKEND) == user ]]; then
  check "--netem-rail 1 'delay 1ms': a forwarder per rail-1 port" bash -c \
    'pgrep -f "sdp-impair $1 h0r1 " >/dev/null && pgrep -f "sdp-impair $1 h1r1 " >/dev/null && ! pgrep -f "sdp-impair $1 h0 " >/dev/null' _ "$JL"
fi
tb rail-down "$JL" 1; rc=$?
check "rail-down $JL 1 succeeds" test "$rc" -eq 0
check "rail 1 down: sdpnet1 has no carrier on both hosts" bash -c \
  'for h in 0 1; do ip -n "sdp-$1-h$h" -o link show dev sdpnet1 | grep -q NO-CARRIER || exit 1; done' _ "$JL"
check "rail 1 down: no traffic over rail 1" ping_fails "sdp-$JL-h0" "10.$oct.2.2"
check "rail 1 down: rails 0 and 2 still carry traffic" bash -c \
  'ip netns exec "sdp-$1-h0" ping -n -c 1 -W 2 "10.$2.0.2" >/dev/null && ip netns exec "sdp-$1-h1" ping -n -c 1 -W 2 "10.$2.4.1" >/dev/null' _ "$JL" "$oct"
tb status --job "$JL" >"$TMP/status" 2>&1
check "status lists rail 1 as DOWN" grep -q "rail 1: DOWN" "$TMP/status"
tb rail-up --job "$JL" --rail 1; rc=$?
check "rail-up --rail 1 succeeds" test "$rc" -eq 0
check "rail 1 up again carries traffic (through its forwarder)" ping_rail "$JL" "$oct" 0 1 1
tb rail-down "$JL" 2 && tb rail-up "$JL" 2; rc=$?
check "rail 2 (tbf) down and up again carries traffic, still shaped" bash -c \
  '[[ $3 -eq 0 ]] && ip netns exec "sdp-$1-h1" ping -n -c 2 -W 2 "10.$2.4.1" >/dev/null &&
   ip netns exec "sdp-$1-sw" tc qdisc show dev h0r2 | grep -q "tbf.*rate 200Mbit"' _ "$JL" "$oct" "$rc"
out=$(tb rail-down "$JL" 3 2>&1); rc=$?
check "rail-down of a rail the job lacks: usage status 2" bash -c '[[ $1 -eq 2 ]] && grep -q "it has 3 rail" <<<"$2"' _ "$rc" "$out"
tb bridge netem --job "$JL" --host all --rail 0 "rate 100mbit"; rc=$?
check "bridge netem --rail 0 shapes rail 0 only" bash -c \
  '[[ $2 -eq 0 ]] && ip netns exec "sdp-$1-sw" tc qdisc show dev h1 | grep -q "tbf.*rate 100Mbit" &&
   ip netns exec "sdp-$1-sw" tc qdisc show dev h1r2 | grep -q "tbf.*rate 200Mbit"' _ "$JL" "$rc"
mkdir -p "/var/run/dpdk/sdp-$JL-h1"
tb rail-down "$JL" 0
tb down --job "$JL" --kill-procs; rc=$?
check "bridge rails: down (with a rail down) succeeds" test "$rc" -eq 0
check "bridge rails: no namespace, veth, forwarder, run dir or DPDK dir left" nothing_left "$JL"
# a failure half-way (bad forwarder args on rail 2) removes every rail
out=$(tb bridge up --job "$JE" --hosts 2 --rails 3 --netem-rail 2 "delay 1ms nonsense 3" 2>&1); rc=$?
check "bridge up --rails 3 with bad --netem-rail args fails" test "$rc" -ne 0
check "failed up with rails leaves nothing behind" nothing_left "$JE"

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
