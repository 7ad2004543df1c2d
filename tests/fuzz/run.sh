#!/bin/sh
# Runs the libFuzzer targets built by `make fuzz-build` (build/fuzz/fuzz_NAME).
#   sh tests/fuzz/run.sh seeds NAME...  each target over its seeds once
#   sh tests/fuzz/run.sh fuzz NAME...   each target for $FUZZ_SECONDS (60),
#                                       one at a time, at nice 10
# Seeds: tests/fuzz/corpus_NAME (read only); what a run finds goes to
# build/fuzz/corpus_NAME; a crash to build/fuzz/crash-... (the target's
# output in build/fuzz/NAME.log). Ends with one line per target: its
# executions, or FAIL.
set -u
cd "$(dirname "$0")/../.."
mode=${1:-}
[ $# -ge 2 ] && { [ "$mode" = seeds ] || [ "$mode" = fuzz ]; } || {
	echo "usage: sh tests/fuzz/run.sh seeds|fuzz NAME..." >&2; exit 2; }
shift
dir=build/fuzz
secs=${FUZZ_SECONDS:-60}
fails=0
summary=
for name in "$@"; do
	bin=$dir/fuzz_$name seeds=tests/fuzz/corpus_$name log=$dir/$name.log
	if [ ! -x "$bin" ] || [ ! -d "$seeds" ]; then
		echo "fuzz: $bin or $seeds is missing (make fuzz-build)" >&2
		fails=$((fails + 1)); summary="$summary
  $name: FAIL (missing)"; continue
	fi
	case $name in
	message) maxlen=65536 ;;
	sse) maxlen=4096 ;;
	rss|ecb_csv|mcp_wire|review_tools) maxlen=32768 ;;
	serve_limits|serve_convlog|serve_request) maxlen=16384 ;;
	nats) maxlen=1024 ;;
	keys) maxlen=64 ;;
	*) maxlen=8192 ;;
	esac
	dict=
	[ -f tests/fuzz/fuzz_$name.dict ] && dict=-dict=tests/fuzz/fuzz_$name.dict
	# Targets whose code warns on standard error for each bad line (the
	# limits journal, a recovered conversation): their stderr is closed;
	# libFuzzer, the sanitizers and fuzz_fail report on a copy.
	quiet=
	case $name in
	serve_limits|serve_convlog) quiet=-close_fd_mask=2 ;;
	esac
	if [ "$mode" = seeds ]; then
		"$bin" -runs=0 -max_len=$maxlen $dict $quiet "$seeds" >"$log" 2>&1
	else
		mkdir -p "$dir/corpus_$name"
		echo "fuzz: $name for ${secs}s" >&2
		nice -n 10 "$bin" -max_total_time="$secs" -max_len=$maxlen $dict $quiet \
			-artifact_prefix="$dir/" "$dir/corpus_$name" "$seeds" >"$log" 2>&1
	fi
	rc=$?
	execs=$(grep -a -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$')
	[ -n "$execs" ] || execs=$(grep -a -Eo '^(#[0-9]+|Done [0-9]+ runs)' "$log" | tail -1 | grep -o '[0-9]*')
	if [ $rc -ne 0 ]; then
		fails=$((fails + 1))
		summary="$summary
  $name: FAIL (exit $rc; see $log)"
		tail -30 "$log" >&2
	else
		summary="$summary
  $name: ok, ${execs:-?} executions"
	fi
done
echo "fuzz ($mode):$summary"
[ $fails -eq 0 ]
