#!/usr/bin/env python3
"""The options man/madf.1 gives a command, for test_cli_help.sh.

man_options.py MANPAGE WORDS...   the options (one a line, sorted) in the
    synopsis of the COMMANDS entry for `madf WORDS` (the .TP/.TQ tag whose
    leading bold words are WORDS); exit 3 when there is no such entry.
man_options.py MANPAGE --global   the options of GLOBAL OPTIONS' tags.
"""
import re
import sys


def plain(tag):
    """A roff tag line as text: fonts dropped, \\- as -."""
    t = re.sub(r'^\.(B|BI|BR|I|IR|RB|RI)\s+', '', tag)
    t = re.sub(r'\\f[BIRP]', '', t)
    return t.replace('\\-', '-').replace('"', ' ')


def leading_words(tag):
    """The command words a COMMANDS tag starts with: the bold text before
    the first font change, up to an option, argument or bracket."""
    if not tag.startswith('.B '):
        return None
    words = []
    for w in re.split(r'\\f', tag[3:], maxsplit=1)[0].split():
        if not re.fullmatch(r'[a-z][a-z0-9-]*', w):
            break
        words.append(w)
    return ' '.join(words)


def options(text):
    return set(re.findall(r'(?<![\w-])(--?[a-z][a-z0-9-]*)', plain(text)))


def tags(lines, section):
    """The tag lines (after .TP or .TQ) in .SH section."""
    inside = False
    for i, line in enumerate(lines):
        if line.startswith('.SH '):
            inside = line[4:].strip().strip('"') == section
        elif inside and line in ('.TP', '.TQ') and i + 1 < len(lines):
            yield lines[i + 1]


def main():
    lines = open(sys.argv[1], encoding='utf-8').read().split('\n')
    if sys.argv[2:] == ['--global']:
        found = set()
        for tag in tags(lines, 'GLOBAL OPTIONS'):
            found |= options(tag)
        print('\n'.join(sorted(found)))
        return 0
    want = ' '.join(sys.argv[2:])
    found, seen = set(), False
    for tag in tags(lines, 'COMMANDS'):
        if leading_words(tag) == want:
            seen = True
            found |= {o for o in options(tag) if o.startswith('--')}
    if not seen:
        return 3
    if found:
        print('\n'.join(sorted(found)))
    return 0


if __name__ == '__main__':
    sys.exit(main())
