# Drift between the command entries, the parser and man/madf.1: for every
# command and subcommand `madf --help` and `madf CMD --help` list, the
# options its --help gives are the ones its man/madf.1 entry's synopsis
# gives (both ways), the parser accepts each of them, and none is taken
# by the global options.
. tests/integration/lib.sh
MAN=$TOP/man/madf.1
PY=$TOP/tests/integration/man_options.py

# section TITLE: the lines of a --help output (stdin) under "TITLE" up to
# the next blank line.
section() { awk -v t="$1" 'index($0, t) == 1 { on = 1; next } on && !NF { exit } on'; }
# The option names of an options section ("  --to AGENT   help").
opt_names() { sed -n 's/^  \(--*[a-z][a-z0-9-]*\).*/\1/p'; }

help=$($MADF --help)
globals=$(printf '%s\n' "$help" | section "global options:" | opt_names | sort)
eq "madf --help's global options are man/madf.1's GLOBAL OPTIONS" \
	"$(printf '%s\n' "$globals" | tr '\n' ' ')" \
	"$(python3 "$PY" "$MAN" --global | tr '\n' ' ')"

queue=$(printf '%s\n' "$help" | section "commands:" | sed -n 's/^  \([a-z][a-z-]*\) .*/\1/p')
eq "madf --help lists the 23 commands" "$(printf '%s\n' "$queue" | wc -l | tr -d ' ')" 23
npaths=0 nopts=0
mkdir -p "$D"
while [ -n "$queue" ]; do
	path=$(printf '%s\n' "$queue" | head -1)
	queue=$(printf '%s\n' "$queue" | sed 1d)
	npaths=$((npaths + 1))
	# shellcheck disable=SC2086 # path is words
	out=$($MADF $path --help 2>&1) || { fail "madf $path --help exits 0" "$out"; continue; }
	case "$out" in "usage: madf $path"*) ;; *) fail "madf $path --help starts with its usage" "$out" ;; esac
	opts=$(printf '%s\n' "$out" | section "options:" | opt_names | sort)
	subs=$(printf '%s\n' "$out" | section "subcommands" | sed -n 's/^  \([a-z][a-z-]*\) .*/\1/p')
	for s in $subs; do queue=$(printf '%s\n%s' "$queue" "$path $s" | sed '/^$/d'); done
	# shellcheck disable=SC2086
	man=$(python3 "$PY" "$MAN" $path); mrc=$?
	if [ "$mrc" -eq 3 ]; then
		# A group of subcommands with no options of its own needs no entry.
		if [ -n "$opts" ] || [ -z "$subs" ]; then
			fail "man/madf.1 has an entry for madf $path" "options: $(echo $opts)"
		fi
	else
		eq "madf $path: --help and man/madf.1 give the same options" \
			"$(echo $opts)" "$(echo $man)"
	fi
	for o in $opts; do
		nopts=$((nopts + 1))
		case " $(echo $globals) " in *" $o "*)
			fail "madf $path $o is not a global option (main would take it)" ;;
		esac
		# The option with a value when it takes one, then an option no
		# command has: the parser goes past the first and stops at the
		# second, or refuses the value; it never calls the first unknown,
		# and nothing runs.
		arg=$(printf '%s\n' "$out" | section "options:" | sed -n "s/^  $o \([^ ]*\).*/\1/p" | head -1)
		# shellcheck disable=SC2086
		if [ -n "$arg" ]; then
			perr=$(cd "$T" && timeout 60 $MADF $path "$o" drift-probe-value --zz-drift-probe </dev/null 2>&1 >/dev/null)
		else
			perr=$(cd "$T" && timeout 60 $MADF $path "$o" --zz-drift-probe </dev/null 2>&1 >/dev/null)
		fi
		prc=$?
		case "$perr" in
		*"unknown option $o"*|*"unknown option --$o"*)
			fail "madf $path accepts $o" "$perr" ;;
		*) if [ "$prc" -eq 0 ] || [ "$prc" -eq 124 ]; then
			fail "madf $path $o ... --zz-drift-probe stops at the parser" "exit $prc" "$perr"
		   fi ;;
		esac
	done
done
# One line for all the probes (each failure has its own line above).
eq "every command and subcommand was checked" "$([ "$npaths" -ge 35 ] && echo yes)" yes
eq "every option of every entry was probed" "$([ "$nopts" -ge 90 ] && echo yes)" yes
done_testing
