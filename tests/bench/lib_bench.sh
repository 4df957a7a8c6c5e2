# lib_bench.sh — shared by the benchmarks (source after tap.sh): a pod cgroup root of the
# run's own, so that housekeeping never walks other runs' leftovers in the shared /kubepods.
#   bench_cgroot DIR   prints /NAME made from the run's temp dir
#   bench_cgroot_rm ROOT  removes ROOT's tree, deepest first, in every hierarchy
bench_cgroot() {
	echo "/$(basename "$1" | tr -c 'a-zA-Z0-9\n' -)"
}
bench_cgroot_rm() {
	for _h in /sys/fs/cgroup/*/ /sys/fs/cgroup/; do
		[ -d "$_h${1#/}" ] && find "$_h${1#/}" -depth -type d -exec rmdir {} + 2>/dev/null
	done
	return 0
}
