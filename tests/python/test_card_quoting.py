"""No text from an archive reaches a model card's command lines, code examples, YAML or Markdown unencoded.

A corpus of hostile strings goes through each context's encoding (rlarchive.hub.quoting) and through whole cards
(every place an archive string or the file name appears); each output is read back with that language's own
parser: bash and dash for shell lines, ``ast.literal_eval`` for Python literals, Node for JavaScript literals,
``yaml.safe_load`` for the front matter, and CommonMark's backslash-escape rule for the Markdown, whose markup
must be exactly that of the same card made from harmless strings (spec/metadata.md §6).
"""

import ast
import json
import os
import re
import shutil
import string
import subprocess
import unicodedata

import numpy as np
import pytest

yaml = pytest.importorskip("yaml")

import rlarchive  # noqa: E402
from rlarchive.filenames import printable  # noqa: E402
from rlarchive.hub.card import card  # noqa: E402
from rlarchive.hub.quoting import js_string, markdown_text, python_string, shell_word, yaml_string  # noqa: E402

HOSTILE = [
    "x`;touch PWNED;`",
    "$(touch PWNED)",
    "${IFS}touch${IFS}PWNED",
    "'; touch PWNED; '",
    '"; touch PWNED; "',
    "a'b\"c\\d",
    "back\\slash\\",
    "\\'",
    "line\nbreak; touch PWNED",
    "cr\rreturn",
    "nul\x00byte",
    "esc\x1b[2J\x1b]0;title\x07\x1b[201~",
    "del\x7f c1\x85\x9b",
    "bidi \u202e\u2066evil\u2069\u200f",
    "zero\u200bwidth \ufeff",
    "sep\u2028\u2029",
    "emoji \U0001f600 \U0010fffd",
    "tag \U000e0041",
    "key: value",
    "# comment",
    "&anchor",
    "*alias",
    "!!python/object/apply:os.system ['touch PWNED']",
    "---",
    "...",
    "- item",
    "? key",
    "{a: b}",
    "[1, 2]",
    "@at %TAG",
    "|\n literal",
    "> folded",
    "null",
    "~",
    "true",
    "0x1F",
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "[x](javascript:alert(1))",
    "](javascript:alert(1))",
    "<javascript:alert(1)>",
    "https://evil.example/x",
    "www.evil.example",
    "evil@example.com",
    "&#x202E; &lt;",
    "| a | b |",
    "`code` ``x``",
    "**bold** _em_ ~~s~~",
    "$x$ $$y$$",
    ":smile: [^1]",
    "\\<b\\>",
    "-leading dash",
    "--env",
    "~/home",
    "=cmd",
    "!history",
    "*.rlarchive",
    " lead and trail ",
    "",
]

PRINTABLE_ASCII = re.compile(r"[\x20-\x7e]+")


def forbidden(text: str) -> list:
    """Characters that must not stand raw in a card: controls but the line break, format characters, separators."""
    return [
        c
        for c in text
        if c != "\n"
        and (
            unicodedata.category(c) in ("Cc", "Cf", "Cs", "Zl", "Zp") or (unicodedata.category(c) == "Zs" and c != " ")
        )
    ]


def commonmark_unescape(text: str) -> str:
    """CommonMark's backslash escapes: a backslash before ASCII punctuation stands for that character."""
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", text)


def skeleton(line: str) -> str:
    """The Markdown markup of a line: its ASCII punctuation that no backslash escapes (``-`` aside)."""
    out, i = [], 0
    while i < len(line):
        if line[i] == "\\" and i + 1 < len(line) and line[i + 1] in string.punctuation:
            i += 2
            continue
        if line[i] in string.punctuation and line[i] != "-":
            out.append(line[i])
        i += 1
    return "".join(out)


# ---------------------------------------------------------------- each context on its own


@pytest.mark.parametrize("s", HOSTILE)
def test_yaml_scalar_reads_back_exactly(s):
    text = yaml_string(s)
    assert text.isascii() and "\n" not in text
    assert yaml.safe_load(f"k: {text}\n") == {"k": s}
    assert yaml.safe_load(f"- {text}\n- after\n") == [s, "after"]  # nothing ends the scalar early


def test_characters_beyond_the_bmp_come_back_from_yaml_as_one_character():
    for s in ("\U0001f600", "a\U00010000b\U0010ffff", "\U000e0041"):
        assert yaml.safe_load(yaml_string(s)) == s


@pytest.mark.parametrize("s", [*HOSTILE, "\udcff lone"])
def test_python_literal_reads_back_exactly(s):
    text = python_string(s)
    assert text.isascii() and "\n" not in text
    assert ast.literal_eval(text) == s


def test_javascript_literals_read_back_exactly(tmp_path):
    corpus = [*HOSTILE, "\udcff lone"]
    for s in corpus:
        text = js_string(s)
        assert text.isascii() and json.loads(text) == s
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    source = (
        "const a = [\n" + ",\n".join(js_string(s) for s in corpus) + "\n];\nprocess.stdout.write(JSON.stringify(a));\n"
    )
    script = tmp_path / "literals.js"
    script.write_text(source, encoding="ascii")
    r = subprocess.run([node, str(script)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == corpus


@pytest.mark.parametrize("shell", ["bash", "sh"])
def test_shell_words_are_read_back_exactly_and_run_nothing(shell, tmp_path):
    path = shutil.which(shell)
    if path is None:
        pytest.skip(f"{shell} is not installed")
    import shlex

    safe = [s for s in HOSTILE if PRINTABLE_ASCII.fullmatch(s)]
    for s in HOSTILE:
        assert (shell_word(s) is None) == (s not in safe), s
    words = [shell_word(s) for s in safe]
    for s, w in zip(safe, words):
        assert shlex.split(w) == [s], (s, w)
    script = "".join(f"printf '%s\\0' {w}\n" for w in words)
    r = subprocess.run([path, "-c", script], capture_output=True, cwd=tmp_path, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split(b"\0")[:-1] == [s.encode() for s in safe]
    assert os.listdir(tmp_path) == []  # nothing ran: no PWNED


@pytest.mark.parametrize("s", HOSTILE)
def test_markdown_text_renders_as_the_text_and_holds_no_markup(s):
    text = markdown_text(s)
    assert commonmark_unescape(text) == printable(s)
    assert skeleton(text) == "" and not forbidden(text) and "\n" not in text and "\r" not in text


# ---------------------------------------------------------------- whole cards


def is_text(s: str) -> bool:
    """The format *text* of spec/metadata.md §1: 1 to 256 characters, no U+0000-U+001F or U+007F."""
    return 1 <= len(s) <= 256 and not re.search(r"[\x00-\x1f\x7f]", s)


def file_name_for(s: str) -> str:
    """A file name that holds ``s`` (no "/" nor NUL: those cannot be in a name)."""
    return "agent " + s.replace("/", "~").replace("\x00", "0") + ".rlarchive"


def make_archive(folder, s: str, text_valid: bool):
    """An archive with ``s`` everywhere a card shows archive text; the text-format keys only when ``s`` fits them."""
    meta = {"source": "stable-baselines3", "sb3.algorithm": s or "x", "sb3.algorithm_class": s}
    if text_valid:
        meta["env_id"] = s
        meta["wrappers"] = json.dumps([{"name": s, "param": s}])
        meta["evaluations"] = json.dumps(
            [
                {
                    "env_id": s,
                    "episodes": 1,
                    "seeds": None,
                    "deterministic": True,
                    "mean": 1.0,
                    "std": 0.0,
                    "returns": [1.0],
                    "lengths": [3],
                    "evaluator": {"name": s, "version": s},
                    "date": "2026-01-01T00:00:00Z",
                }
            ]
        )
    path = os.path.join(folder, file_name_for(s))
    rlarchive.save(
        path,
        {"hp " + s: s, "gamma": 0.99},
        {"policy": {"w": np.zeros(2, np.float32)}},
        metadata=meta,
        producer=(s or "p", s),
    )
    return path


def blocks(text: str) -> tuple[list, dict]:
    """(lines outside fenced code blocks, {language: [lines of its blocks]})."""
    outside, inside, lang = [], {}, None
    for line in text.split("\n"):
        if line.startswith("```"):
            lang = line[3:] if lang is None else None
            continue
        if lang is None:
            outside.append(line)
        else:
            inside.setdefault(lang, []).append(line)
    return outside, inside


def run_shell_lines(lines: list, cwd) -> list:
    """Each line run by bash with ``rlarchive`` a function that prints its arguments: the argument lists."""
    script = 'rlarchive() { printf "%s\\0" "$@"; printf "\\n"; }\n' + "\n".join(lines) + "\n"
    r = subprocess.run(["bash", "-c", script], capture_output=True, cwd=cwd, timeout=60)
    assert r.returncode == 0, r.stderr
    return [[a.decode() for a in out.split(b"\0")[:-1]] for out in r.stdout.split(b"\n")[:-1]]


@pytest.mark.parametrize("s", HOSTILE)
def test_a_card_shows_every_hostile_string_safely(s, tmp_path):
    text_valid = is_text(s)
    hostile_dir, benign_dir, run_dir = tmp_path / "h", tmp_path / "b", tmp_path / "run"
    for d in (hostile_dir, benign_dir, run_dir):
        d.mkdir()
    path = make_archive(hostile_dir, s, text_valid)
    benign = card(make_archive(benign_dir, "Harmless0", text_valid))
    got = card(path)
    name = os.path.basename(path)
    assert not forbidden(got)

    # YAML front matter: every value read back as it was
    head, sep, _ = got[4:].partition("\n---\n")
    fm = yaml.safe_load(head)
    assert got.startswith("---\n") and sep and set(fm) == set(yaml.safe_load(benign[4:].partition("\n---\n")[0]))
    if text_valid:
        assert s in fm["tags"]
        (model,) = fm["model-index"]
        assert model["name"] == f"{s.lower()}-{s}"
        assert model["results"][0]["dataset"] == {"type": s, "name": s}

    # Markdown: the same markup as the harmless card, line for line; the text is the shown form
    outside, inside = blocks(got.partition("\n---\n")[2])
    benign_outside, _ = blocks(benign.partition("\n---\n")[2])
    notes = [line for line in outside if line.startswith("(The ") and "shell line" in line]
    kept = [line for line in outside if line and line not in notes]
    benign_outside = [line for line in benign_outside if line]
    assert len(kept) == len(benign_outside)
    assert [skeleton(line) for line in kept] == [skeleton(line) for line in benign_outside]
    assert any(commonmark_unescape(markdown_text(s)) in commonmark_unescape(line) for line in kept)

    # Python and JavaScript examples: the literal is the file name
    for block in ("\n".join(inside["python"]),):
        opened = [
            n
            for n in ast.walk(ast.parse(block))
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in ("open", "load")
        ]
        literals = [ast.literal_eval(call.args[0]) for call in opened]
        assert literals.count("agent.zip") == 1  # the export-sb3 route: the zip the shell line writes
        assert len(literals) == 3 and all(x == name for x in literals if x != "agent.zip")
    (js_line,) = [line for line in inside["js"] if "open(" in line]
    assert json.loads(js_line[js_line.index("open(") + 5 : js_line.rindex(")")]) == name

    # Shell lines: bash reads exactly the file name and the environment id, or the placeholders; nothing runs
    file_arg = name if PRINTABLE_ASCII.fullmatch(name) else "FILE"
    env_arg = s if text_valid and PRINTABLE_ASCII.fullmatch(s) else "ENV_ID"
    argvs = run_shell_lines(inside["sh"], run_dir)
    assert argvs[0] == ["export-sb3", file_arg, "agent.zip"]
    assert argvs[1] == ["export-onnx", file_arg, "agent.onnx"]
    evaluate = argvs[2]
    if evaluate[2].startswith("--env="):
        evaluate[2:3] = ["--env", evaluate[2][len("--env=") :]]
    assert evaluate == ["evaluate", file_arg, "--env", env_arg, "--episodes", "10", "--seed", "0"]
    assert os.listdir(run_dir) == []
    assert bool(notes) == (file_arg == "FILE" or (text_valid and env_arg == "ENV_ID"))


def test_the_reported_env_id_does_not_run_when_the_card_or_package_readme_is_pasted(tmp_path):
    """The environment id x`;touch PWNED;` once closed the card's quotes: pasting the line ran touch."""
    from rlarchive.hub.package import CARD_NAME, package

    env = "x`;touch PWNED;`"
    src = tmp_path / "agent.rlarchive"
    rlarchive.save(src, {"gamma": 0.99}, {"policy": {"w": np.zeros(2, np.float32)}}, metadata={"env_id": env})
    result = package(src, tmp_path / "hub", onnx=False)
    readme = (tmp_path / "hub" / CARD_NAME).read_text(encoding="utf-8")
    assert readme.partition("\n## Files\n")[0] == card(src).partition("\n## How to load\n")[0]
    assert CARD_NAME in result.files
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    _, inside = blocks(readme)
    argvs = run_shell_lines(inside["sh"], run_dir)
    assert argvs[1][:4] == ["evaluate", "agent.rlarchive", "--env", env]
    assert os.listdir(run_dir) == []
