#!/bin/sh
# Runs every unit test binary (cmocka) and every integration script, and
# ends with one line "N passed, N failed". Logs go to build/test-logs/.
# Environment: MADF_BIN (the madf to test), UNIT_DIR (unit test binaries),
# TESTS (optional: only scripts/binaries whose name contains this).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 2
: "${MADF_BIN:=$top/madf}"
: "${UNIT_DIR:=$top/build/rel/tests}"
export MADF_BIN
logs=$top/build/test-logs
mkdir -p "$logs"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:halt_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
pass=0 fail=0
failed_list=""

for t in "$UNIT_DIR"/test_*; do
	[ -x "$t" ] || continue
	name=$(basename "$t")
	case "$name" in *"${TESTS:-}"*) ;; *) continue ;; esac
	log=$logs/$name.log
	(cd "$top" && timeout 600 "$t") >"$log" 2>&1
	rc=$?
	p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" | awk '{s+=$1} END {print s+0}')
	f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$log" | awk '{s+=$1} END {print s+0}')
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
	pass=$((pass + p)); fail=$((fail + f))
	printf '%-28s %4d passed, %d failed\n' "$name" "$p" "$f"
	[ "$f" -eq 0 ] || { failed_list="$failed_list $name"; sed -n '/FAILED\|ERROR\|runtime error\|Sanitizer/p' "$log" | head -20; }
done

for t in "$top"/tests/integration/test_*.sh; do
	[ -f "$t" ] || continue
	name=$(basename "$t" .sh)
	case "$name" in *"${TESTS:-}"*) ;; *) continue ;; esac
	log=$logs/$name.log
	timeout 900 sh "$t" >"$log" 2>&1
	rc=$?
	p=$(grep -c '^ok ' "$log")
	f=$(grep -c '^not ok ' "$log")
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; echo "not ok - $name exited $rc" >>"$log"; fi
	pass=$((pass + p)); fail=$((fail + f))
	printf '%-28s %4d passed, %d failed\n' "$name" "$p" "$f"
	[ "$f" -eq 0 ] || { failed_list="$failed_list $name"; grep -A8 '^not ok ' "$log" | head -40; }
done

[ -z "$failed_list" ] || echo "failed:$failed_list (logs in build/test-logs/)"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
