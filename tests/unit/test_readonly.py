"""Which shell commands count as read-only (the planner's Bash, a searching step's Bash)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from maker.tools.command.readonly import is_read_only, why_not_read_only


@pytest.mark.parametrize("command", [
    "ls -la src",
    "rg -n 'def x' src",
    "rg -n 'def parse_plan' src",
    "rg -n --glob '*.py' foo",
    "rg -n 'a|b' src",
    "rg -n 'end$' src",
    "rg --pretty -i foo",
    "rg -tpy -A 3 foo",
    "grep -rn TODO . | head -20",
    "grep -rn '<div>; &' .",
    "find . -name '*.py' -not -path './.venv/*' -type f",
    "find . -name '*.py' -not -path './.venv/*'",
    "find . -mtime -7 -size -10k -print",
    r"find src \( -name '*.md' -o -name '*.txt' \) -maxdepth 2",
    "find . -newermt 2024-01-01 -printf '%p\\n'",
    "git log --oneline -5",
    "git -C sub diff HEAD~1",
    "git show HEAD:README.md",
    "git status --short",
    "git --no-pager log -p -- src",
    "git diff --stat HEAD~3..HEAD",
    "git diff --text a b",
    "git grep -n foo -- 'src/*.py'",
    "git log --format='%h %s' -3",
    "cat a | wc -l",
    "cat README.md | wc -l",
    "sort names.txt | uniq -c",
    "sort -rn counts.txt",
    "sort -t, -k2,2n -S 1K data.csv",
    "sort --key=2 --reverse f",
    "uniq -c a.txt",
    "uniq -f 1 a.txt",
    "head -n 5 f",
    "tail -20 f",
    "wc -l *.py",
    "tree -L 2",
    "tree -a -I node_modules --dirsfirst",
    "du -sh src",
    "stat f",
    "file -b --mime-type f",
    "diff -u a b",
    "maker status",
    "maker plan show --json",
    "echo hi | tr a-z A-Z",
    "rg -n 'a|b' src | sort | uniq -c | sort -rn | head",
    "rg -e--pre=x foo",
    r"cat a\ b.txt",
])
def test_readers_pass(command: str) -> None:
    assert is_read_only(command), why_not_read_only(command)


BYPASSES = [
    # sort: a program to compress temp files runs each line as shell; -o/-T write
    ("sort -S 1K --compress-program=sh notes.txt", "`sort --compress-program` can write"),
    ("sort --compress=sh notes.txt", "abbreviates `--compress-program`"),
    ("sort -uo out a.txt", "`sort -o` (in `-uo`) can write"),
    ("sort --outp=out a.txt", "`sort --outp` abbreviates `--output`"),
    ("sort -o out.txt in.txt", "`sort -o` can write"),
    ("sort -oout.txt in.txt", "`sort -o` (in `-oout.txt`) can write"),
    ("sort -T /tmp/x a", "`sort -T` can write"),
    ("sort --c=x a", "`sort --c` abbreviates `--compress-program`"),
    ("sort --rev a", "`sort --rev` is not a known read-only option"),
    # brace expansion turns one word into options
    ("find . -name '*.py' -{delete,true}", "brace expansion"),
    ("find . -name '*.py' '-{delete,true}'", "brace expansion"),
    ("find . -{a..z}", "brace expansion"),
    # git grep's pager runs a program
    ("git grep --open-files-in-pager=rm -e foo", "`git grep --open-files-in-pager` can write"),
    ("git grep --open=rm -e foo", "abbreviates `--open-files-in-pager`"),
    ("git grep -Orm foo", "`git grep -O` (in `-Orm`) can write"),
    ("git grep -nO foo", "`git grep -O` (in `-nO`) can write"),
    # uniq's second operand is an output file
    ("uniq a.txt victim.txt", "`uniq` writes its second file operand"),
    ("uniq -c a.txt victim.txt", "`uniq` writes its second file operand"),
    ("uniq - victim.txt", "`uniq` writes its second file operand"),
    ("uniq -- -c -d", "`uniq` writes its second file operand"),
    ("uniq +3 victim.txt", "`uniq` writes its second file operand"),
    ("uniq a.txt -c", "`uniq` writes its second file operand"),
    ("uniq a*.txt", "could expand to several files"),
    ("uniq *.txt", "could expand to a file named like an option of `uniq`"),
    # find actions that write or run
    ("find . -fprint0 out", "`find -fprint0` can write"),
    ("find . -fls x", "`find -fls` can write"),
    ("find . -okdir rm {} +", "`find -okdir` can write"),
    ("find . -name x -delete", "`find -delete` can write"),
    ("find . -exec rm {} +", "`find -exec` can write"),
    (r"find . -exec rm {} \;", "`find -exec` can write"),
    ("find . -name -delete", "`find -delete` can write"),
    ("find . -newermt -fprint x", "`find -fprint` can write"),
    ("find . -D exec", "`find -D` is not a known read-only option"),
    ("find * -name x", "could expand to a file named like an option of `find`"),
    ("find . -name *.py", "could expand to a file named like an option of `find`"),
    # programs by path
    ("/tmp/x/cat file", "`/tmp/x/cat` names the program by a path"),
    ("./cat file", "`./cat` names the program by a path"),
    ("/usr/bin/head -n 5 pyproject.toml", "names the program by a path"),
    ("cat a | /tmp/wc -l", "`/tmp/wc` names the program by a path"),
    # ripgrep running programs
    ("rg --hostname-bin=PROG x", "`rg --hostname-bin` can write"),
    ("rg --pre=x", "`rg --pre` can write"),
    ("rg --pre ./evil x", "`rg --pre` can write"),
    ("rg --pre-glob '*' --pre x", "`rg --pre` can write"),
    ("rg --pr=x foo", "`rg --pr` abbreviates `--pre`"),
    ("rg -nz foo", "`rg -z` (in `-nz`) can write"),
    ("rg --search-zip foo", "`rg --search-zip` can write"),
    ("rg -n foo -- *", "could expand to a file named like an option of `rg`"),
    ("rg --p* foo", "could expand to a file named like an option of `rg`"),
    # file compiles magic; tree writes
    ("file -C -m x", "`file -C` can write"),
    ("file -Cm x", "`file -C` (in `-Cm`) can write"),
    ("file --compile -m x", "`file --compile` can write"),
    ("file -z x.gz", "`file -z` can write"),
    ("tree -R -H .", "`tree -R` can write"),
    ("tree -o out", "`tree -o` can write"),
    ("tree -Lo 2 out", "`tree -o` (in `-Lo`) can write"),
    # git
    ("git diff --ext-diff", "`git diff --ext-diff` can write"),
    ("git diff --ext", "`git diff --ext` abbreviates `--ext-diff`"),
    ("git log --output=x", "`git log --output` can write"),
    ("git log --outp=x", "`git log --outp` abbreviates `--output`"),
    ("git log --output x", "`git log --output` can write"),
    ("git show --textconv HEAD:x", "`git show --textconv` can write"),
    ("git cat-file --filters HEAD:x", "`git cat-file --filters` can write"),
    ("git log --show-signature", "`git log --show-signature` can write"),
    ("git log --format='%G?'", "runs gpg"),
    ("git log --format=%G?", "could expand to a file named like an option of `git`"),
    ("git log --help", "`git log --help` can write"),
    ("git -c core.pager=x log", "`git -c` can set a program"),
    ("git -ccore.pager=x log", "`git -c` can set a program"),
    ("git --config-env=x=y log", "`git --config-env` can set a program"),
    ("git --exec-path=/x log", "`git --exec-path` chooses where git finds"),
    ("git --exec-path log", "`git --exec-path` chooses where git finds"),
    ("git --git-dir=fixtures/evil log", "`git --git-dir` can point git"),
    ("git --work-tree=. status", "`git --work-tree` can point git"),
    ("git -p log", "`git -p` runs a pager"),
    ("git --bare log", "`git --bare` is not a known read-only git option"),
    ("git -C --exec-path=/x log", "`git -C` needs a directory"),
    ("git -C * log", "could expand to a file named like an option of `git`"),
    ("git ls-remote --upload-pack=x origin", "`git ls-remote` is not a read-only git command"),
    ("git log -- *.py", "could expand to a file named like an option of `git`"),
    ("git commit -am x", "`git commit` is not a read-only git command"),
    ("git push", "`git push` is not a read-only git command"),
    ("git --version", "`git --version` is not a known read-only git option"),
    ("git", "needs a read-only subcommand"),
    ("diff -l a b", "`diff -l` can write"),
]

KEPT_REFUSALS = [
    ("rm -rf build", "`rm` is not a known read-only command"),
    ("ls > files.txt", "shell operator"),
    ("cat a; rm b", "shell operator"),
    ("ls && touch x", "shell operator"),
    ("ls || touch x", "shell operator"),
    ("echo $(touch x)", "shell operator"),
    ("echo `touch x`", "shell operator"),
    ("echo '$(touch x)'", "shell operator"),
    ("cat <<EOF", "shell operator"),
    ("sleep 100 &", "shell operator"),
    ("ls |& cat", "shell operator"),
    ("ls\nrm x", "shell operator"),
    ("ls\rrm x", "shell operator"),
    ("(rm x)", "shell operator"),
    ("cat <(rm x)", "shell operator"),
    ("find . -exec rm {} ;", "shell operator"),
    ("echo ${x}", "shell operator"),
    ("cat $HOME/x", "it uses `$` outside single quotes"),
    ('rg "$x" .', "it uses `$` inside double quotes"),
    ("find . ! -name x", "it uses `!`"),
    ("ls #; rm x", "it uses `#`"),
    ("ls\x0bx", "control character"),
    ("FOO=x cat a", "`FOO=x` sets an environment variable"),
    ("xargs rm", "`xargs` is not a known read-only command"),
    ("cat x | xargs rm", "`xargs` is not a known read-only command"),
    ("env rm x", "`env` is not a known read-only command"),
    ("cat x | sh", "`sh` is not a known read-only command"),
    ("cat x | python3 -", "`python3` is not a known read-only command"),
    ("sed -i s/a/b/ f", "`sed` is not a known read-only command"),
    ("awk 1 f", "`awk` is not a known read-only command"),
    ("less f", "`less` is not a known read-only command"),
    ("maker step start 3", "only maker's read commands"),
    ("maker plan write -", "only `maker plan show`"),
    ("ls 'unclosed", "cannot be parsed"),
    ('ls "unclosed', "cannot be parsed"),
    ("ls |", "empty pipeline stage"),
    ("", "empty pipeline stage"),
]


@pytest.mark.parametrize(("command", "reason"), BYPASSES + KEPT_REFUSALS)
def test_writers_and_operators_are_refused(command: str, reason: str) -> None:
    why = why_not_read_only(command)
    assert why is not None and reason in why, why
    assert not is_read_only(command)


@settings(max_examples=500, deadline=None)
@given(st.text())
def test_any_text_gets_an_answer(command: str) -> None:
    why = why_not_read_only(command)
    assert why is None or isinstance(why, str)


_SHELLISH = st.lists(st.sampled_from([*" \t|;&<>()$`'\"\\{},.*?[]!#=-/~\nabcoz", "sort ",
                                       "uniq ", "git ", "find ", "rg ", "--output", "-o",
                                       "cat "])).map("".join)


@settings(max_examples=500, deadline=None)
@given(_SHELLISH)
def test_shell_like_text_gets_an_answer(command: str) -> None:
    why = why_not_read_only(command)
    assert why is None or isinstance(why, str)
