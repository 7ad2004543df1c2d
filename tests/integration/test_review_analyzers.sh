# madf review's compiler analyzers (gcc -fanalyzer, clang --analyze) as
# the critical agent's tools: planted defects found by each at the exact
# file and line, the include path guessed from the tree, a file that does
# not compile or runs past its timeout skipped with a note, a missing
# analyzer reported, and the keep-policy (agreement, track record) saying
# why.
. tests/integration/lib.sh

A=$T/code
mkdir -p "$A/src" "$A/include"
cp "$TOP/tests/fixtures/review/src/memory.c" "$TOP/tests/fixtures/review/src/memory.h" "$A/src/"
# a header in a directory of its own: found only through the guessed -Iinclude
cat >"$A/include/holder.h" <<'EOF'
struct holder {
	int *p;
};
EOF
cat >"$A/src/pointers.c" <<'EOF'
/* Planted: a use after free (CWE-416) and a NULL dereference (CWE-476). */
#include <stdlib.h>
#include "holder.h"

int use_after_free(struct holder *h)
{
	h->p = malloc(sizeof(*h->p));
	if (!h->p)
		return 0;
	*h->p = 1;
	free(h->p);
	return *h->p;
}

int null_deref(void)
{
	int *q = NULL;
	return *q;
}
EOF
printf 'int broken(void) { return }\n' >"$A/src/broken.c"

# field FILE PYTHON-EXPR: EXPR with d = the JSON document in FILE.
field() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }
# places FILE: "file:line:reference" of each critical finding.
places() { field "$1" "' '.join('%s:%d:%s' % (f['file'], f['line'], f['reference']) for f in d['critical'])"; }
# kept FILE LINE: the "Kept: ..." reason of the critical finding on LINE.
kept() { field "$1" "[f['description'].split('Kept: ')[1] for f in d['critical'] if f['line'] == $2][0]"; }
# tools FILE LINE: the tools and rules the finding on LINE names.
tools() { field "$1" "[__import__('re').search(r'\(((?:cppcheck|flawfinder|gcc-analyzer|clang-analyzer) [^)]*)\)', f['description']).group(1) for f in d['critical'] if f['line'] == $2][0]"; }
checklist() { printf '{"critical": ["%s"]}' "$1" >"$T/cl.json"; }

# --- gcc alone ---------------------------------------------------------------
checklist gcc-analyzer
$MADF review "$A" --json --agents critical --checklist "$T/cl.json" >"$T/g.json" 2>"$T/g.err"
eq "gcc alone: the review completes" "$?" 0
eq "gcc alone: the double free, the use after free and the NULL dereference at their lines" \
   "$(places "$T/g.json")" "src/memory.c:12:CWE-415 src/pointers.c:12:CWE-416 src/pointers.c:18:CWE-476"
eq "... named by gcc's own options" \
   "$(tools "$T/g.json" 12) | $(tools "$T/g.json" 18)" \
   "gcc-analyzer -Wanalyzer-double-free | gcc-analyzer -Wanalyzer-null-dereference"
has "a single tool is kept by its track record, which the finding states" "$(kept "$T/g.json" 18)" \
   "gcc-analyzer alone, whose track record for NULL dereference (-Wanalyzer-null-dereference) is 1.00: 38 hits, 0 false alarms"
eq "the tool ran" "$(field "$T/g.json" "d['review']['tools']['gcc_analyzer']")" ok
has "a file that does not compile is skipped with a note" "$(field "$T/g.json" "'\n'.join(d['review']['notes'])")" \
   "gcc-analyzer: src/broken.c: does not compile (expected expression before"

# --- clang alone ---------------------------------------------------------------
checklist clang-analyzer
$MADF review "$A" --json --agents critical --checklist "$T/cl.json" >"$T/c.json" 2>/dev/null
eq "clang alone: the double free and the use after free; its NULL dereference (track record 0.75) left out" \
   "$(places "$T/c.json")" "src/memory.c:12:CWE-415 src/pointers.c:12:CWE-416"
eq "... named by clang's checker" "$(tools "$T/c.json" 12)" "clang-analyzer unix.Malloc"
has "what was left out is counted in a note" "$(field "$T/c.json" "'\n'.join(d['review']['notes'])")" \
   "critical: 1 hit below the confidence bar left out"
has "clang's note for the broken file" "$(field "$T/c.json" "'\n'.join(d['review']['notes'])")" \
   "clang-analyzer: src/broken.c: does not compile"

# --- all the analyzers: agreement ------------------------------------------------
$MADF review "$A" --json --agents critical >"$T/a.json" 2>"$T/a.err"
eq "all: the three defects, once each (deduplicated across tools)" "$(places "$T/a.json")" \
   "src/memory.c:12:CWE-415 src/pointers.c:12:CWE-416 src/pointers.c:18:CWE-476"
eq "the double free: three tools agree" "$(kept "$T/a.json" 12 | head -1)" \
   "3 tools agree on this line's double free."
has "... and the finding names each" "$(tools "$T/a.json" 12)" \
   "cppcheck doubleFree, gcc-analyzer -Wanalyzer-double-free, clang-analyzer unix.Malloc"
has "progress names the new analyzers" "$(cat "$T/a.err")" "review_critical: gcc-analyzer on 5 files"

# --- without the header's directory the file does not compile -------------------
mv "$A/include" "$T/elsewhere"
checklist gcc-analyzer
$MADF review "$A" --json --agents critical --checklist "$T/cl.json" >"$T/h.json" 2>/dev/null
eq "without include/ the pointers are not analyzed (the guessed -I was what found holder.h)" \
   "$(places "$T/h.json")" "src/memory.c:12:CWE-415"
has "... and the note says why" "$(field "$T/h.json" "'\n'.join(d['review']['notes'])")" \
   "gcc-analyzer: src/pointers.c: does not compile (holder.h: No such file or directory); skipped"
mv "$T/elsewhere" "$A/include"

# --- a per-file timeout ------------------------------------------------------------
mkdir -p "$T/slow"
printf '#!/bin/sh\nsleep 30\n' >"$T/slow/gcc" && chmod +x "$T/slow/gcc"
PATH=$T/slow:$PATH MADF_REVIEW_TU_TIMEOUT_S=1 $MADF review "$A" --json --agents critical \
	--checklist "$T/cl.json" >"$T/t.json" 2>/dev/null
eq "an analyzer past its per-file timeout: the review completes" "$?" 0
eq "... each file skipped with a note" \
   "$(field "$T/t.json" "sorted(n for n in d['review']['notes'] if 'timed out' in n)")" \
   "['gcc-analyzer: src/broken.c: timed out after 1 s (MADF_REVIEW_TU_TIMEOUT_S); skipped', 'gcc-analyzer: src/memory.c: timed out after 1 s (MADF_REVIEW_TU_TIMEOUT_S); skipped', 'gcc-analyzer: src/pointers.c: timed out after 1 s (MADF_REVIEW_TU_TIMEOUT_S); skipped']"

# --- a missing analyzer -------------------------------------------------------------
mkdir -p "$T/bin"
for p in cppcheck flawfinder ctags python3 perl sh; do
	q=$(command -v $p) && ln -s "$q" "$T/bin/$p"
done
PATH=$T/bin $MADF review "$A" --json --agents critical >"$T/m.json" 2>/dev/null
eq "gcc and clang missing: the review completes" "$?" 0
eq "both are reported missing" \
   "$(field "$T/m.json" "(d['review']['tools']['gcc_analyzer'], d['review']['tools']['clang_analyzer'])")" \
   "('missing', 'missing')"
has "with what was skipped" "$(field "$T/m.json" "'\n'.join(d['review']['notes'])")" \
   "gcc_analyzer is not installed (make deps installs it): skipped gcc's path-sensitive checks"
eq "cppcheck's double free and NULL dereference are still found" "$(places "$T/m.json")" \
   "src/memory.c:12:CWE-415 src/pointers.c:18:CWE-476"

done_testing
