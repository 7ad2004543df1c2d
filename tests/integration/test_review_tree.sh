# madf review on a real tree: the files git ignores (build outputs) are
# left out with a note; cppcheck runs once per review even though the
# critical and the improvement agents both ask for it; the analyzers run
# at most MADF_REVIEW_JOBS (default: the CPU count) at a time; a crashed
# worker's task is reassigned; the workers report their progress.
. tests/integration/lib.sh
FIX=$T/code
cp -a "$TOP/tests/fixtures/review" "$FIX"
field() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }
places() { field "$1" "' '.join('%s:%d:%s' % (f['file'], f['line'], f['reference']) for f in d['$2'])"; }

# a git work tree with a build directory and a generated file it ignores
G=$T/g
cp -a "$TOP/tests/fixtures/review" "$G"
printf '/build/\n*.gen.c\n' >"$G/.gitignore"
mkdir -p "$G/build/obj"
printf 'void gen(char *p) { free(p); free(p); }\n' >"$G/build/obj/x.c"
printf '/* TODO: generated */\n' >"$G/src/table.gen.c"
git -C "$G" init -q && git -C "$G" add -A && \
	git -C "$G" -c user.name=t -c user.email=t@example.invalid commit -qm fixture
"$MADF" review "$G" --json --agents debt,critical >"$T/g.json" 2>/dev/null
eq "a git work tree: the ignored files are not reviewed" "$(field "$T/g.json" "d['review']['files']")" 10
has "... and a note says so" "$(field "$T/g.json" "'|'.join(d['review']['notes'])")" \
   "2 paths git ignores left out (build, src/table.gen.c)"
eq "... the findings are the tree's own" "$(places "$T/g.json" critical)" \
   "src/buffer.c:9:CWE-788 src/buffer.c:15:CWE-134 src/config.c:4:CWE-798 src/memory.c:12:CWE-415"
"$MADF" review "$FIX" --json --agents debt >"$T/f.json" 2>/dev/null
eq "not a git tree: every file is reviewed (no note)" \
   "$(field "$T/f.json" "(d['review']['files'], [n for n in d['review']['notes'] if 'git ignores' in n])")" "(9, [])"

# cppcheck once per review: a wrapper counts its runs
mkdir -p "$T/bin"
real=$(command -v cppcheck)
printf '#!/bin/sh\necho run >>"%s"\nexec "%s" "$@"\n' "$T/cppcheck.runs" "$real" >"$T/bin/cppcheck"
chmod +x "$T/bin/cppcheck"
PATH=$T/bin:$PATH MADF_DATA_DIR=$T/d2 "$MADF" review "$FIX" --json --agents critical,improvement >"$T/c.json" 2>/dev/null
eq "the critical and the improvement agents share one cppcheck run" "$(wc -l <"$T/cppcheck.runs" | tr -d ' ')" 1
eq "... and both have its findings" "$(places "$T/c.json" critical) | $(places "$T/c.json" improvement)" \
   "src/buffer.c:9:CWE-788 src/buffer.c:15:CWE-134 src/config.c:4:CWE-798 src/memory.c:12:CWE-415 | scripts/deploy.sh:4:https://www.shellcheck.net/wiki/SC2086 src/server.c:6:CWE-563 src/server.c:6:CWE-563 src/server.c:7:CWE-563"
eq "... both calls are counted in the tool usage" \
   "$(field "$T/d2/tools/usage.json" "sorted(d['tools']['review.cppcheck']['by_agent'].items())")" \
   "[('review_critical', 1), ('review_improvement', 1)]"
PATH=$T/bin:$PATH "$MADF" review "$FIX" --json --agents critical,improvement >/dev/null 2>&1
eq "the next review runs cppcheck again (nothing kept across reviews)" "$(wc -l <"$T/cppcheck.runs" | tr -d ' ')" 2

# one analyzer at a time: a wrapper records how many run at once
for p in cppcheck flawfinder shellcheck ctags cloc pmccabe; do
	real=$(command -v $p) || continue
	cat >"$T/bin/$p" <<EOS
#!/bin/sh
mkdir "$T/running.\$\$" && n=\$(ls -d "$T"/running.* | wc -l) && echo \$n >>"$T/concurrency"
"$real" "\$@"; rc=\$?
rmdir "$T/running.\$\$"
exit \$rc
EOS
	chmod +x "$T/bin/$p"
done
rm -f "$T/concurrency"
PATH=$T/bin:$PATH MADF_REVIEW_JOBS=1 "$MADF" review "$FIX" --json >"$T/j.json" 2>/dev/null
eq "MADF_REVIEW_JOBS=1: the review completes" "$?" 0
eq "... never two analyzers at once" "$(sort -n "$T/concurrency" | tail -1)" 1
check "... and each ran" test "$(wc -l <"$T/concurrency")" -ge 6
eq "... with the same findings" "$(places "$T/j.json" critical)" \
   "src/buffer.c:9:CWE-788 src/buffer.c:15:CWE-134 src/config.c:4:CWE-798 src/memory.c:12:CWE-415"

# a worker that stops (an injected crash after accepting its task) is seen
# at once and its task reassigned to a fresh one (no waiting for the
# 600-second deadline)
MADF_REVIEW_BACKOFF_MS=10 "$MADF" review "$FIX" --agents critical,debt --inject-fault review_critical:crash \
	--json >"$T/k.json" 2>"$T/k.err"
eq "a crashed agent: the review completes" "$?" 0
eq "... at the second attempt, the first failed for the stopped worker" \
   "$(field "$T/k.json" "(lambda a: (a['status'], a['attempts'], a['errors'][0]['error']))(d['review']['agents']['critical'])")" \
   "('completed', 2, 'review_critical stopped without answering (transient)')"
has "... by a fresh review_critical" "$(cat "$T/k.err")" \
   "review_critical: reassigned to a fresh review_critical (the last one stopped)"
eq "... with the findings" "$(places "$T/k.json" critical)" \
   "src/buffer.c:9:CWE-788 src/buffer.c:15:CWE-134 src/config.c:4:CWE-798 src/memory.c:12:CWE-415"

# the workers report each analyzer as it starts (task_progress to the master)
"$MADF" review "$FIX" --agents critical >/dev/null 2>"$T/p.err"
eq "the critical agent's steps, in order, as the master hears them" \
   "$(sed -n 's/^madf: review: review_critical: //p' "$T/p.err" | tr '\n' '|')" \
   "assigned|accepted (attempt 1)|running the analyzers|cppcheck on 7 files|flawfinder on 6 files|secrets on 9 files|gcc-analyzer on 7 files|clang-analyzer on 7 files|madf-flow on 7 files|ctags on 7 files|done, 4 findings|"
check "each step went over the bus as a task_progress" python3 -c '
import json, os, sys
n = 0
for d, _, fs in os.walk(sys.argv[1]):
    for f in fs:
        if f.endswith(".json") and not f.endswith(".reason.json"):
            m = json.load(open(os.path.join(d, f)))
            n += m.get("type") == "task_progress" and m.get("from") == "review_critical"
sys.exit(0 if n >= 5 else 1)' "$D/messages"
done_testing
