#!/usr/bin/env bash
# Boot timing of a schedlab guest: domain create -> the agent's hello frame,
# and -> power-off, through libvirt (schedlab guest run) side by side with a
# bare qemu-system-x86_64 on the same kernel, initramfs and command line; and
# the initramfs size. Usage: bench/boot.sh [BZIMAGE] [ROUNDS]
#   BZIMAGE defaults to the schedlab kernel (tests/e2e/lib.sh e2e_kernel).
#   Starts virtlogd and libvirtd when they are not running (stopped after).
case "${1:-}" in -h | --help) sed -n '2,7p' "$0"; exit 0 ;; esac
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
source "$root/tests/e2e/lib.sh"
kernel=${1:-$(e2e_kernel)}
rounds=${2:-3}
schedlab=$root/build/schedlab
source "$root/tests/lib/libvirt-daemons.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/schedlab-bench-boot.XXXXXX")
trap 'rm -rf "$tmp"; libvirt_daemons_stop' EXIT
libvirt_daemons_start
chmod 755 "$tmp"

echo '{"run_id": "bench", "features": [], "workloads": []}' >"$tmp/plan.json"
base=$("$schedlab" guest initramfs)
"$schedlab" guest initramfs --plan "$tmp/plan.json" -o "$tmp/initrd" >/dev/null
cp "$kernel" "$tmp/bzImage"
# The command line guest_run() uses, from the golden domain XML its unit test checks.
cmdline=$(sed -n 's:.*<cmdline>\(.*\)</cmdline>.*:\1:p' "$root/tests/data/guest/tcg-2cpu.xml")

now() { date +%s.%N; }
libvirt_round() {
	"$schedlab" guest run --kernel "$kernel" --plan "$tmp/plan.json" --accel tcg --vcpus 2 \
		--memory 512 --deadline 120 --run-id "bench-$$-$1" -o "$tmp/o.json" >/dev/null
	python3 -c 'import json,sys; o=json.load(open(sys.argv[1])); assert o["status"]=="ok", o["reason"]; print(o["boot_seconds"], o["total_seconds"])' "$tmp/o.json"
}
qemu_round() {
	rm -f "$tmp/results" "$tmp/console"
	local t0 hello="" end
	t0=$(now)
	qemu-system-x86_64 -accel tcg,thread=multi -M pc -smp 2 -m 512 -display none -no-reboot \
		-no-user-config -nodefaults -kernel "$tmp/bzImage" -initrd "$tmp/initrd" \
		-append "$cmdline" -serial "file:$tmp/console" -serial "file:$tmp/results" &
	local pid=$!
	while kill -0 $pid 2>/dev/null; do
		if [ -z "$hello" ] && grep -q "SLFRAME v1 hello" "$tmp/results" 2>/dev/null; then
			hello=$(now)
		fi
		sleep 0.01
	done
	wait $pid
	end=$(now)
	[ -n "$hello" ] || hello=$end
	echo "$(echo "$hello - $t0" | bc) $(echo "$end - $t0" | bc)"
}

echo "kernel: $kernel ($(stat -c %s "$kernel") bytes)"
echo "base initramfs: $base ($(stat -c %s "$base") bytes), with plan $(stat -c %s "$tmp/initrd") bytes"
printf '%-8s %-10s %-10s %-10s %-10s\n' round lv_hello lv_end qemu_hello qemu_end
lh=0 le=0 qh=0 qe=0
for i in $(seq 1 "$rounds"); do
	read -r a b < <(libvirt_round "$i")
	read -r c d < <(qemu_round)
	printf '%-8s %-10.2f %-10.2f %-10.2f %-10.2f\n' "$i" "$a" "$b" "$c" "$d"
	lh=$(echo "$lh + $a" | bc); le=$(echo "$le + $b" | bc)
	qh=$(echo "$qh + $c" | bc); qe=$(echo "$qe + $d" | bc)
done
printf 'mean     %-10.2f %-10.2f %-10.2f %-10.2f\n' "$(echo "$lh / $rounds" | bc -l)" \
	"$(echo "$le / $rounds" | bc -l)" "$(echo "$qh / $rounds" | bc -l)" "$(echo "$qe / $rounds" | bc -l)"
printf 'ratio libvirt/qemu: hello %.2f, power-off %.2f\n' "$(echo "$lh / $qh" | bc -l)" \
	"$(echo "$le / $qe" | bc -l)"
