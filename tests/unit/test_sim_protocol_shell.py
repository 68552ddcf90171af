"""simphone.shell: the grammar adb sends, parsed like mksh; argv handed to phone.run."""

from __future__ import annotations

import shlex

from hypothesis import given, settings
from hypothesis import strategies as st

from simphone.fs import VirtualFS
from simphone.shell import run_script
from simphone.types import CommandResult


class RecordingPhone:
    """A PhoneLike that knows `say` (prints its args), `fail N` and `both`; records argv."""

    name = model = device = "rec"

    def __init__(self) -> None:
        self.calls: list[list[str]] = []
        self.fs = VirtualFS()

    def run(self, argv: list[str]) -> CommandResult:
        self.calls.append(list(argv))
        if argv[0] == "say":
            return CommandResult(stdout=(" ".join(argv[1:]) + "\n").encode())
        if argv[0] == "fail":
            return CommandResult(stderr=b"failing\n", exit_code=int(argv[1]))
        if argv[0] == "both":
            return CommandResult(stdout=b"OUT\n", stderr=b"ERR\n")
        if argv[0] == "lines":
            return CommandResult(stdout=b"alpha\nbeta\ngamma\nalphabet\n")
        if argv[0] == "boom":
            raise RuntimeError("app crashed")
        return CommandResult(stderr=f"/system/bin/sh: {argv[0]}: not found\n".encode(), exit_code=127)


def run(script: str) -> tuple[RecordingPhone, object]:
    phone = RecordingPhone()
    return phone, run_script(script, phone)


def test_words_quotes_and_escapes_are_undone_like_mksh():
    phone, _ = run("""say 'single $HOME' "double \\"q\\" \\$x \\a" back\\ slash\\;x a"b"'c'""")
    assert phone.calls == [["say", "single $HOME", 'double "q" $x \\a', "back slash;x", "abc"]]


def test_empty_quoted_arguments_are_kept_and_unset_variables_vanish():
    phone, _ = run("say '' \"\" $NOPE x")
    assert phone.calls == [["say", "", "", "x"]]


def test_sequence_and_or_and_status():
    _, out = run("fail 3; echo $?; fail 1 && say no; fail 1 || say yes; true && echo ok")
    assert out.stdout == b"3\nyes\nok\n"
    assert out.exit_code == 0


def test_adbutils_shell2_suffix_gives_exit_status():
    _, out = run("fail 5; echo X4EXIT:$?")
    assert out.stdout == b"X4EXIT:5\n"


def test_exit_stops_the_script_with_its_code():
    _, out = run("say a; exit 7; say b")
    assert (out.stdout, out.exit_code) == (b"a\n", 7)


def test_unknown_command_is_the_phones_business():
    phone, out = run("frobnicate now")
    assert phone.calls == [["frobnicate", "now"]]
    assert out.exit_code == 127
    assert out.stderr == b"/system/bin/sh: frobnicate: not found\n"


def test_output_order_is_kept_across_streams():
    _, out = run("say 1; fail 2; say 3")
    assert out.merged() == [b"1\n", b"failing\n", b"3\n"]


def test_redirections():
    _, out = run("both 2>/dev/null; both >/dev/null; both 2>&1 >/dev/null")
    # `2>&1 >/dev/null`: stderr goes where stdout went before stdout was dropped.
    assert out.stdout == b"OUT\nERR\n"
    assert out.stderr == b"ERR\n"
    _, out = run("fail 1 2>&1")
    assert out.chunks == [(1, b"failing\n")]
    _, out = run("both >&2")
    assert out.chunks == [(2, b"OUT\n"), (2, b"ERR\n")]
    phone, out = run("both > /sdcard/log.txt 2>&1; both 2>/sdcard/err.txt; say >/sdcard/empty.txt")
    assert phone.fs.read_file("/sdcard/log.txt") == b"OUT\nERR\n"
    assert phone.fs.read_file("/sdcard/err.txt") == b"ERR\n"
    assert phone.fs.read_file("/sdcard/empty.txt") == b"\n"


def test_redirect_into_the_phone_filesystem():
    phone, out = run("echo hello > /sdcard/a.txt; echo more >> /sdcard/a.txt")
    assert out.exit_code == 0
    assert phone.fs.read_file("/sdcard/a.txt") == b"hello\nmore\n"


def test_a_redirect_that_cannot_be_created_fails_and_skips_the_command():
    # As mksh: the file is opened before the command runs; if that fails, $? is 1.
    phone, out = run("say hi > /no/such/dir/x.txt; echo $?; say after > /sdcard/ok.txt && echo $?")
    assert phone.calls == [["say", "after"]]
    assert out.stdout == b"1\n0\n"
    assert b"can't create /no/such/dir/x.txt" in out.stderr
    assert phone.fs.read_file("/sdcard/ok.txt") == b"after\n"
    _, out = run("say x > /sdcard")  # a directory
    assert out.exit_code == 1
    _, out = run("lines | grep alpha > /no/dir/y")
    assert out.exit_code == 1 and out.stdout == b""
    phone, out = run("echo keep > /sdcard/t.txt; fail 2 > /sdcard/t.txt; echo $?")
    assert phone.fs.read_file("/sdcard/t.txt") == b""  # `>` empties the file even when nothing is written
    assert out.stdout == b"2\n"

def test_pipes_into_the_small_filters():
    _, out = run("lines | grep alpha")
    assert out.stdout == b"alpha\nalphabet\n"
    _, out = run("lines | grep -v alpha | head -n 1")
    assert out.stdout == b"beta\n"
    _, out = run("lines | wc -l")
    assert out.stdout == b"4\n"
    _, out = run("lines | grep zzz")
    assert out.exit_code == 1


def test_comments_assignments_and_variables():
    phone, out = run("X=5 # a comment; say never\necho $X ${X}y")
    assert out.stdout == b"5 5y\n"
    assert phone.calls == []


def test_echo_flags_and_escapes():
    _, out = run(r"echo -n a; echo 'b\tc'; echo -E 'd\te'")
    assert out.stdout == b"ab\tc\nd\\te\n"


def test_syntax_errors_are_reported_like_a_device_not_raised():
    for script in ("say 'unterminated", "say $(id)", "say `id`", "&& say", "say ;;", "say >"):
        phone, out = run(script)
        assert out.exit_code == 1, script
        assert out.stderr.startswith(b"/system/bin/sh: "), script
        assert phone.calls == [], script


def test_a_crashing_command_becomes_an_error_exit():
    _, out = run("boom; say after")
    assert out.exit_code == 0
    assert b"RuntimeError: app crashed" in out.stderr
    assert out.stdout == b"after\n"


_text = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\0"), max_size=40)


@settings(max_examples=300, deadline=None)
@given(st.lists(_text, min_size=1, max_size=5))
def test_shlex_quoted_arguments_arrive_exactly(args):
    # adbutils and the agent's device layer both send shlex.quote-d arguments.
    phone, out = run(" ".join(shlex.quote(a) for a in ["say", *args]))
    assert phone.calls == [["say", *args]]
    assert out.exit_code == 0


@settings(max_examples=200, deadline=None)
@given(
    st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\0\n"), min_size=1, max_size=40)
)
def test_backslash_escaping_every_character_is_exact(text):
    # The classic `input text` escaping: a backslash before every non-alphanumeric character
    # (a newline cannot be escaped this way: backslash-newline is a line continuation).
    escaped = "".join(c if c.isalnum() else "\\" + c for c in text)
    phone, _ = run("say " + escaped)
    assert phone.calls == [["say", text]]
