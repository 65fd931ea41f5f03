#!/usr/bin/env bash
# make rxe-check: the verbs backend on a real RDMA device, soft-RoCE (rdma_rxe), in a QEMU guest.
#
# Why a guest: the host kernel of a CI machine of this kind has no RDMA (CONFIG_INFINIBAND off,
# no modules), but Debian's own kernel booted under QEMU's software emulation loads rdma_rxe, and
# rxe0 over a dummy netdev is a verbs device like any other (RC queue pairs, RDMA WRITE and
# WRITE_WITH_IMM, memory registration). The guest shares this machine's root read-only over 9p,
# so it runs this checkout's release binaries and test binaries as they are; a second, writable
# 9p share is the report folder. Emulation is slow: this checks correctness, not speed.
#
# What runs in the guest (scripts/rxe-guest.sh): the rdma unit tests and every #[ignore]d device
# test of the verbs backend, a 2-rank and a 4-rank asap-fig7 cluster run over --transport rdma
# (the torn-buffer histogram from real RDMA writes), ps-modes over rdma with 4 ranks, and
# perftest's ib_write_bw and ib_write_lat beside our transport-bench rdma. Its report,
# $OUT/report.md and $OUT/steps.tsv, says what ran and whether it passed.
#
# Inputs (environment): BIN, the folder of release binaries built with --features rdma,ofi
# (default target/rxe/release, which this script builds); RDMA_TESTS, the bench-core test binary
# built with those features (built in BIN's target folder when unset); OUT (default
# results/rxe-check); CACHE (the kernel, default ~/.cache/syncbench/rxe); RXE_TIMEOUT, the guest's
# whole budget in seconds (default 1500; a CI-set run took 590 s here); RXE_STEPS, `all` (default) or `checks` (CI's: no 2-rank
# run, no speed measurements; scripts/rxe-guest.sh). Needs, from Debian's packages: qemu-system-x86, busybox-static, kmod, cpio, rdma-core,
# ibverbs-providers, ibverbs-utils, perftest (installed with apt-get when running as root).
#
# Exit status: 0 when every step passed, 1 when a step failed (the report names it), 2 when the
# guest could not be set up (a package, the kernel, QEMU).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

OUT=${OUT:-results/rxe-check}
CACHE=${CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/syncbench/rxe}
RXE_TIMEOUT=${RXE_TIMEOUT:-1500}
RXE_STEPS=${RXE_STEPS:-all}
setup_fail() { echo "rxe-check: $*" >&2; exit 2; }
case "$RXE_STEPS" in
  all | checks) ;;
  *) setup_fail "RXE_STEPS is all or checks, not '$RXE_STEPS'" ;;
esac

pkgs="qemu-system-x86 busybox-static kmod cpio rdma-core ibverbs-providers ibverbs-utils perftest"
if ! dpkg -s $pkgs >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get install -y -q $pkgs >/dev/null 2>&1 ||
      { apt-get update -q >/dev/null && apt-get install -y -q $pkgs >/dev/null; } ||
      setup_fail "could not install $pkgs"
  else
    setup_fail "needs Debian's $pkgs (install them, or run as root with apt-get)"
  fi
fi

# The release binaries and the rdma test binary: without BIN, in a target folder of their own
# (target/rxe) so that the default build's features are not disturbed.
# With BIN given (e.g. target/release, built with the rdma and ofi features), the test binary is
# built in BIN's target folder, in cargo's test profile (opt-level 2): correctness tests, and a
# bench-core of one codegen unit in release would cost minutes more.
if [ -z "${BIN:-}" ]; then
  cargo build --release --target-dir target/rxe -p experiments --features rdma,ofi --bins
  BIN=target/rxe/release
fi
# BIN's target folder when BIN is a cargo profile folder (target/release), else target/rxe.
case "$(basename "$BIN")" in
  release | debug) tests_target=$(dirname "$BIN") ;;
  *) tests_target=target/rxe ;;
esac
if [ -z "${RDMA_TESTS:-}" ]; then
  mkdir -p "$tests_target"
  RDMA_TESTS=$(cargo test --target-dir "$tests_target" -p bench-core --features rdma,ofi --lib \
    --no-run --message-format=json 2>"$tests_target/rxe-tests-build.log" |
    sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -1) ||
    { tail -20 "$tests_target/rxe-tests-build.log" >&2; setup_fail "building the rdma test binary failed ($tests_target/rxe-tests-build.log)"; }
fi
[ -x "$BIN/syncbench" ] || setup_fail "no syncbench in $BIN (build with --features experiments/rdma)"
[ -n "$RDMA_TESTS" ] && [ -x "$RDMA_TESTS" ] || setup_fail "no bench-core rdma test binary (RDMA_TESTS)"
BIN=$(cd "$BIN" && pwd)
RDMA_TESTS=$(cd "$(dirname "$RDMA_TESTS")" && pwd)/$(basename "$RDMA_TESTS")

# Debian's kernel, the one its linux-image-amd64 names today, unpacked once into the cache.
mkdir -p "$CACHE"
kver=$(apt-cache depends linux-image-amd64 2>/dev/null | sed -n 's/.*Depends: linux-image-\(.*\)$/\1/p' | head -1)
[ -n "$kver" ] || kver=$(ls "$CACHE/root/lib/modules" 2>/dev/null | tail -1)
[ -n "$kver" ] || setup_fail "cannot tell which kernel to boot (apt-cache depends linux-image-amd64)"
kroot=$CACHE/root
if [ ! -f "$kroot/boot/vmlinuz-$kver" ]; then
  (cd "$CACHE" && rm -f linux-image-"$kver"_*.deb && apt-get download "linux-image-$kver" >/dev/null 2>&1) ||
    setup_fail "could not download linux-image-$kver"
  rm -rf "$kroot" && dpkg -x "$CACHE"/linux-image-"$kver"_*.deb "$kroot"
  depmod -b "$kroot" "$kver"
fi
moddir=$kroot/lib/modules/$kver

# The modules the guest loads, dependencies first (from modules.dep).
declare -A loaded=()
order=()
load() {
  local path=$1 deps
  [ -n "${loaded[$path]:-}" ] && return
  loaded[$path]=1
  deps=$(grep -E "^$path:" "$moddir/modules.dep" | cut -d: -f2)
  for d in $deps; do load "$d"; done
  order+=("$path")
}
for m in virtio_pci 9pnet_virtio 9p crc32_generic dummy rdma_rxe ib_uverbs rdma_ucm; do
  path=$(grep -E "/$m\.ko:" "$moddir/modules.dep" | cut -d: -f1)
  [ -n "$path" ] || setup_fail "kernel $kver has no module $m"
  load "$path"
done

# A busybox initramfs: load the modules, mount this machine's root and the report folder, and
# run the guest script in a chroot of the host's root.
rm -rf "$OUT" && mkdir -p "$OUT"
out_abs=$(cd "$OUT" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work"/initrd/{bin,mods,proc,sys,dev,host}
cp /bin/busybox "$work/initrd/bin/busybox"
: >"$work/initrd/mods/order"
for path in "${order[@]}"; do
  cp "$moddir/$path" "$work/initrd/mods/"
  basename "$path" >>"$work/initrd/mods/order"
done
cat >"$work/initrd/init" <<EOF
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
for m in \$(cat /mods/order); do insmod /mods/\$m || echo "rxe-check: insmod \$m failed"; done
mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=262144 hostroot /host
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 out /host$out_abs
mount -t proc proc /host/proc; mount -t sysfs sys /host/sys; mount -t devtmpfs dev /host/dev
mount -t tmpfs tmp /host/tmp; mount -t tmpfs run /host/run
mkdir -p /host/dev/shm && mount -t tmpfs shm /host/dev/shm
chroot /host /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/tmp \
  BIN="$BIN" RDMA_TESTS="$RDMA_TESTS" OUT="$out_abs" RXE_STEPS="$RXE_STEPS" \
  /bin/bash "$repo/scripts/rxe-guest.sh" </dev/null
echo "rxe-check: guest done"
poweroff -f
EOF
chmod +x "$work/initrd/init"
(cd "$work/initrd" && find . | cpio -o -H newc --quiet | gzip -1) >"$work/initrd.gz"

echo "rxe-check: booting kernel $kver under QEMU (software emulation), report in $OUT"
start=$(date +%s)
set +e
timeout "$RXE_TIMEOUT" qemu-system-x86_64 -accel tcg,thread=multi -cpu max -smp 2 -m 4096 \
  -kernel "$kroot/boot/vmlinuz-$kver" -initrd "$work/initrd.gz" \
  -append "console=ttyS0 panic=-1 quiet" -nographic -nic none -no-reboot \
  -virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
  -virtfs local,path="$out_abs",mount_tag=out,security_model=none \
  >"$OUT/guest-console.log" 2>&1
qemu_rc=$?
set -e
echo "rxe-check: guest ran $(( $(date +%s) - start )) s (qemu exit $qemu_rc); console in $OUT/guest-console.log"
[ "$qemu_rc" -ne 124 ] || { echo "rxe-check: the guest ran past RXE_TIMEOUT=$RXE_TIMEOUT s" >&2; exit 1; }
[ -f "$OUT/steps.tsv" ] || { tail -30 "$OUT/guest-console.log" >&2; setup_fail "the guest wrote no report"; }
cat "$OUT/report.md"
! grep -q $'\tfail\t' "$OUT/steps.tsv" && grep -q '^done' "$OUT/steps.tsv"
