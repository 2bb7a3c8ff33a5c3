"""Every documented command works as written: extract them, check them, run the ones that need no model.

Which pages: `DOC_GLOBS` (README.md, docs/*.md, benchmarks/README.md, vscode-extension/README.md,
examples/*/README.md). Not docs/decisions/ and not docs/benchmarks/: they record what was decided or
measured at a past commit (a command there may name a flag that has since changed, and that is history,
not a bug); the commands a user is told to type live on the pages above.

What is a command:
- every line of a fenced ```bash / ```sh / ```shell / ```console block (`\\` continuations joined,
  `# comments` dropped, a `$ ` prompt stripped);
- every inline code span that starts like a command (`greenloop SUB...`, `python benchmarks/...`,
  `python3 -m greenloop...`, `bash PATH`, `VAR=value command`). Spans are synopses
  (`[--json]`, `list|show`, `FILE`), so they are only ever checked statically.

What happens to a block command: the first rule of `RULES` whose pattern matches it (after leading
`VAR=value` assignments) says "run" or "static", with its reason. A `<!-- doc-check: static (REASON) -->`
line right before a block makes the whole block static; a marker without a reason, or an unknown
marker, is an error. A block command that no rule matches is an error: a new documented command must
be classified here, never skipped silently.

Static check (every command, run or not): `shlex` splits it into pipeline parts; a leading
`GREENLOOP_SECTION__KEY=value` must name a setting; for `greenloop ...`
(or `python -m greenloop ...`) the subcommand path and every flag must exist in the parser
(`greenloop.cli.build_parser`), and the flags of `python SCRIPT.py` must appear in the script's source;
repository paths named must exist (values of output flags such as `--out` need only their parent
folder; built artifacts are matched against `BUILT`).

Run: in a copy of the repository's tracked files, HOME and XDG folders pointing into a temp folder,
`GREENLOOP_LOCAL_MODEL__ENABLED=false` (nothing starts a model), `greenloop` on PATH running this
checkout's code, each under a timeout; the exit code must be the rule's.

`python3 tests/support/doc_commands.py` prints every command with its classification and checks it.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC_GLOBS = ["README.md", "docs/*.md", "benchmarks/README.md", "vscode-extension/README.md", "examples/*/README.md"]
SHELL_LANGS = {"bash", "sh", "shell", "console"}


@dataclass(frozen=True)
class Rule:
    pattern: str  # re.match against the command without its leading VAR=value assignments
    action: str  # "run" | "static"
    reason: str
    exit_code: int = 0  # for "run": the documented outcome
    output: str = ""  # for "run": text the output must contain


# First match wins. Patterns are anchored at the start of the command.
RULES: list[Rule] = [
    Rule(r"bash \.ci/demo$", "static", "sets up the machine and runs the fix loop with the embedded model"),
    Rule(r"bash \.ci/test$", "static", "the whole suite (hours); it is CI itself"),
    Rule(r"python3? -m pip install ", "static", "installs into the Python environment"),
    Rule(r"python3? -m build\b", "static", "builds in an isolated env fetched from PyPI; .ci/wheel-check runs it"),
    Rule(r"pipx install ", "static", "installs into the user's pipx; .ci/wheel-check runs the wheel path"),
    Rule(r"code --install-extension ", "static", "the VS Code UI; vscode-extension/scripts/e2e.sh covers it"),
    Rule(r"greenloop model fetch\b", "static", "downloads the model (~1 GB) and builds llama-server"),
    Rule(r"greenloop sandbox build-images\b", "static", "done by .ci/setup; minutes when the tags are not cached"),
    Rule(r"greenloop (fix|improve|generate|bench|serve)\b", "static", "needs a model (or is the daemon)"),
    Rule(r"greenloop --version$", "run", "prints the version"),
    Rule(r"greenloop doctor$", "run", "a report; exit 0 even when parts are missing"),
    Rule(r"greenloop config show( --json)?$", "run", "reads settings only"),
    Rule(r"greenloop runs list$", "run", "reads the (empty, temp) run store"),
    Rule(r"greenloop sandbox run examples/calculator$", "run", "the example is red on purpose: exit 1",
         exit_code=1, output="4 passed, 2 failed"),
    Rule(r"python3 -m pytest -q examples/calculator \| greenloop locate examples/calculator --test-output -$",
         "run", "retrieval only, no model", output="calculator.py"),
]

# Paths a documented command names that are built, not committed: (pattern, what makes them).
BUILT: list[tuple[str, str]] = [
    (r"(\./)?dist/greenloop-(?P<version>[^-/]+)[-.]", "python3 -m build"),
    (r"vscode-extension/dist/greenloop\.vsix$", "bash vscode-extension/scripts/test.sh"),
]
OUTPUT_FLAGS = {"--out", "--write", "--outdir"}
MARKER = re.compile(r"<!--\s*doc-check:(.*?)-->")
MARKER_BODY = re.compile(r"\s*(static|run)\s*\(([^()]*\S[^()]*)\)\s*$")
INLINE = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")
INLINE_COMMAND = re.compile(
    r"(greenloop (-|[a-z])|python3? (-m greenloop|benchmarks/)|bash \S+/|[A-Z_]+=\S+ (greenloop|python))"
)


@dataclass
class Command:
    doc: str  # path relative to ROOT
    line: int
    text: str
    inline: bool = False  # a synopsis in running text: static only
    marker: tuple[str, str] | None = None  # (action, reason) from a doc-check marker
    errors: list[str] = field(default_factory=list)

    @property
    def where(self) -> str:
        return f"{self.doc}:{self.line}"


def doc_files(root: Path = ROOT) -> list[Path]:
    files: list[Path] = []
    for pattern in DOC_GLOBS:
        files += sorted(root.glob(pattern))
    return files


def extract(text: str, doc: str) -> tuple[list[Command], list[str]]:
    """The commands of one page, and the errors of its markers."""
    commands: list[Command] = []
    errors: list[str] = []
    lines = text.splitlines()
    pending: tuple[str, str] | None = None
    pending_line = 0
    fence: str | None = None
    lang = ""
    block_marker: tuple[str, str] | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if fence is None:
            m = re.match(r"(`{3,}|~{3,})\s*([\w+-]*)", stripped)
            if m:
                fence, lang = m.group(1), m.group(2).lower()
                block_marker, pending = pending, None
                i += 1
                continue
            if mm := MARKER.search(line):
                body = MARKER_BODY.match(mm.group(1))
                if body is None:
                    errors.append(f"{doc}:{i + 1}: doc-check marker must be 'static (REASON)' or 'run (REASON)'"
                                  f" with a reason: {mm.group(0)}")
                else:
                    pending, pending_line = (body.group(1), body.group(2).strip()), i + 1
            elif stripped and pending is not None:
                errors.append(f"{doc}:{pending_line}: doc-check marker not followed by a fenced block")
                pending = None
            for span in INLINE.findall(line):
                if INLINE_COMMAND.match(span):
                    commands.append(Command(doc, i + 1, span.replace("\\|", "|"), inline=True))
            i += 1
            continue
        if stripped.startswith(fence):
            fence = None
            i += 1
            continue
        if lang in SHELL_LANGS and stripped and not stripped.startswith("#"):
            start = i
            joined = stripped
            while joined.endswith("\\") and i + 1 < len(lines):
                i += 1
                joined = joined[:-1].rstrip() + " " + lines[i].strip()
            joined = re.sub(r"^\$\s+", "", joined)
            joined = _drop_comment(joined)
            if joined:
                commands.append(Command(doc, start + 1, joined, marker=block_marker))
        i += 1
    if pending is not None:
        errors.append(f"{doc}:{pending_line}: doc-check marker not followed by a fenced block")
    return commands, errors


def _drop_comment(command: str) -> str:
    """The command without its trailing `# comment` (a # outside quotes, at a word's start)."""
    quote = ""
    for pos, ch in enumerate(command):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (pos == 0 or command[pos - 1].isspace()):
            return command[:pos].strip()
    return command.strip()


def strip_env(argv: list[str]) -> list[str]:
    i = 0
    while i < len(argv) and re.match(r"[A-Za-z_][A-Za-z0-9_]*=", argv[i]):
        i += 1
    return argv[i:]


def rule_for(command: Command) -> Rule | None:
    body = " ".join(strip_env(command.text.split()))
    return next((r for r in RULES if re.match(r.pattern, body)), None)


def classify(command: Command) -> tuple[str, str, Rule | None]:
    """(action, reason, rule): "run", "static" or "error"."""
    if command.inline:
        return "static", "a synopsis in running text", None
    rule = rule_for(command)
    if command.marker is not None:
        action, reason = command.marker
        if action == "run" and (rule is None or rule.action != "run"):
            return "error", "marked run, but no run rule in RULES says its exit code", None
        return action, reason, rule
    if rule is None:
        return "error", "no rule in RULES and no doc-check marker: classify it", None
    return rule.action, rule.reason, rule


# Static check ------------------------------------------------------------------------------------


def pipeline(text: str) -> list[list[str]]:
    """The simple commands of a shell line (split on | && || ;), placeholders like <commit> kept whole."""
    text = re.sub(r"<([\w .-]+)>", r"PLACEHOLDER_\1", text)
    lexer = shlex.shlex(text, posix=True, punctuation_chars="|&;")
    lexer.whitespace_split = True
    parts: list[list[str]] = [[]]
    for tok in lexer:
        if tok and set(tok) <= set("|&;"):
            parts.append([])
        else:
            parts[-1].append(tok)
    return [p for p in parts if p]


def _synopsis_tokens(text: str) -> list[str]:
    text = re.sub(r"[\[\]()]", " ", text.replace("\\|", "|"))
    try:
        return shlex.split(text)
    except ValueError:
        return text.split()


def check_static(command: Command, parser: argparse.ArgumentParser, root: Path = ROOT) -> list[str]:
    errors: list[str] = []
    if command.inline:
        argvs = [_synopsis_tokens(command.text)]
    else:
        try:
            argvs = pipeline(command.text)
        except ValueError as exc:
            return [f"cannot parse: {exc}"]
    cwd_is_root = True
    for full in argvs:
        errors += check_env(full)
        argv = strip_env(full)
        if not argv:
            continue
        if argv[0] == "cd":
            cwd_is_root = False  # later relative paths are relative to somewhere else
            continue
        if argv[0] == "greenloop":
            errors += check_greenloop(argv[1:], parser, command.inline)
        elif argv[0] in ("python", "python3") and argv[1:3] == ["-m", "greenloop"]:
            errors += check_greenloop(argv[3:], parser, command.inline)
        elif argv[0] in ("python", "python3") and len(argv) > 1 and argv[1] == "-m":
            module = argv[2] if len(argv) > 2 else ""
            if module.startswith("greenloop") and importlib.util.find_spec(module) is None:
                errors.append(f"no module {module}")
        elif argv[0] in ("python", "python3") and len(argv) > 1 and argv[1].endswith(".py"):
            errors += check_script(argv[1], argv[2:], root)
        if cwd_is_root:
            errors += check_paths(argv, root)
    return errors


def check_env(argv: list[str]) -> list[str]:
    """A leading `GREENLOOP_SECTION__KEY=value` must name a setting."""
    from greenloop.settings import Settings

    errors: list[str] = []
    for tok in argv[: len(argv) - len(strip_env(argv))]:
        name = tok.split("=", 1)[0]
        if not name.startswith("GREENLOOP_"):
            continue
        section, _, key = name.removeprefix("GREENLOOP_").lower().partition("__")
        field_info = Settings.model_fields.get(section)
        model = getattr(field_info, "annotation", None) if field_info is not None else None
        fields = getattr(model, "model_fields", {})
        if key not in fields:
            errors.append(f"{name}: no setting {section}.{key}")
    return errors


def check_greenloop(args: list[str], parser: argparse.ArgumentParser, synopsis: bool) -> list[str]:
    """The subcommand path and every flag of `greenloop ARGS` must exist in `parser`."""
    errors: list[str] = []
    current = parser
    path = ["greenloop"]
    i = 0
    while i < len(args):
        tok = args[i]
        if tok == "...":
            i += 1
            continue
        if tok.startswith("-"):
            flag = tok.split("=", 1)[0]
            action = current._option_string_actions.get(flag)
            if action is None:
                errors.append(f"`{' '.join(path)}` has no option {flag}")
                i += 1
                continue
            takes_value = action.nargs != 0 and "=" not in tok
            i += 2 if takes_value else 1
            continue
        sub = _subparsers(current)
        if sub is not None:
            names = tok.split("|") if synopsis else [tok]
            missing = [n for n in names if n not in sub.choices]
            if missing:
                errors.append(f"`{' '.join(path)}` has no subcommand {', '.join(missing)}"
                              f" (has: {', '.join(sub.choices)})")
                return errors
            if len(names) > 1:
                return errors  # alternatives: each exists; nothing after them is theirs alone
            current = sub.choices[tok]
            path.append(tok)
        i += 1
    if not synopsis and len(path) == 1 and not any(a.startswith("-") for a in args):
        errors.append("`greenloop` without a subcommand")
    return errors


def _subparsers(parser: argparse.ArgumentParser) -> argparse._SubParsersAction | None:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action
    return None


def check_script(script: str, args: list[str], root: Path) -> list[str]:
    path = root / script
    if not path.is_file():
        return [] if _looks_like_repo_path(script) else [f"no script {script}"]  # else check_paths says it
    source = path.read_text(encoding="utf-8")
    return [f"{script} has no option {flag}" for flag in (a.split("=", 1)[0] for a in args if a.startswith("--"))
            if f'"{flag}"' not in source and f"'{flag}'" not in source]


def _looks_like_repo_path(tok: str) -> bool:
    if tok.startswith(("/", "~", "-", "http:", "https:", "PLACEHOLDER")) or "PLACEHOLDER" in tok:
        return False
    if re.search(r"[*<>$=]|\.\.\.", tok) or tok.isupper():
        return False
    return "/" in tok and not re.match(r"^[A-Z]+/", tok)


def check_paths(argv: list[str], root: Path) -> list[str]:
    errors: list[str] = []
    for i, tok in enumerate(argv):
        if not _looks_like_repo_path(tok) or tok.startswith("../"):
            continue  # ../ is outside the repository (the shared machine folder)
        built = next((m for pat, _what in BUILT if (m := re.match(pat, tok))), None)
        if built is not None:
            version = built.groupdict().get("version")
            if version is not None and version != _version():
                errors.append(f"{tok}: the package version is {_version()}, not {version}")
            continue
        target = root / tok
        if i > 0 and argv[i - 1] in OUTPUT_FLAGS:
            if not target.parent.is_dir():
                errors.append(f"{tok}: no folder {target.parent.relative_to(root)}")
        elif not target.exists():
            errors.append(f"{tok}: no such path in the repository")
    return errors


def _version() -> str:
    from greenloop import __version__

    return __version__


# Run ---------------------------------------------------------------------------------------------


def run_env(tmp: Path) -> dict[str, str]:
    """HOME, the XDG folders and PATH's `greenloop` in `tmp`; this checkout's code; no embedded model."""
    home = tmp / "home"
    bin_dir = tmp / "bin"
    for d in (home, bin_dir):
        d.mkdir(parents=True, exist_ok=True)
    shim = bin_dir / "greenloop"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m greenloop "$@"\n', encoding="utf-8")
    shim.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GREENLOOP_", "OPENAI_", "XDG_"))}
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_CACHE_HOME=str(home / ".cache"),
        XDG_DATA_HOME=str(home / ".local/share"),
        XDG_STATE_HOME=str(home / ".local/state"),
        PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}",
        PYTHONPATH=os.pathsep.join([str(ROOT / "server"), str(ROOT / "sandbox")]),
        GREENLOOP_LOCAL_MODEL__ENABLED="false",
        NO_COLOR="1",
    )
    return env


def copy_checkout(dest: Path) -> Path:
    """The repository's tracked files (as they are on disk) in `dest`."""
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    for name in files.decode().split("\0"):
        if not name or not (ROOT / name).is_file():
            continue
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, target)
    return dest


def run_command(command: Command, rule: Rule, cwd: Path, env: dict[str, str], timeout: float = 60) -> str | None:
    """None when the command ends as its rule says, else what went wrong."""
    try:
        # a pipeline's exit code is its last command's, as in an interactive shell
        done = subprocess.run(["bash", "-c", command.text], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return f"did not end within {timeout:.0f} s"
    out = done.stdout + done.stderr
    if done.returncode != rule.exit_code:
        return f"exit {done.returncode}, documented {rule.exit_code}:\n{out[-2000:]}"
    if rule.output and rule.output not in out:
        return f"output lacks {rule.output!r}:\n{out[-2000:]}"
    return None


def all_commands(root: Path = ROOT) -> tuple[list[Command], list[str]]:
    commands: list[Command] = []
    errors: list[str] = []
    for path in doc_files(root):
        found, errs = extract(path.read_text(encoding="utf-8"), str(path.relative_to(root)))
        commands += found
        errors += errs
    return commands, errors


def check_all(run: bool = True) -> list[str]:
    from greenloop.cli import build_parser

    parser = build_parser()
    commands, errors = all_commands()
    to_run: list[tuple[Command, Rule]] = []
    for c in commands:
        action, reason, rule = classify(c)
        if action == "error":
            errors.append(f"{c.where}: `{c.text}`: {reason}")
            continue
        errors += [f"{c.where}: `{c.text}`: {e}" for e in check_static(c, parser)]
        if action == "run" and rule is not None:
            to_run.append((c, rule))
    if run and to_run:
        with tempfile.TemporaryDirectory(prefix="greenloop-doc-") as tmp:
            checkout = copy_checkout(Path(tmp) / "checkout")
            env = run_env(Path(tmp))
            for c, rule in to_run:
                if (problem := run_command(c, rule, checkout, env)) is not None:
                    errors.append(f"{c.where}: `{c.text}`: {problem}")
    return errors


def main() -> int:
    commands, _ = all_commands()
    for c in commands:
        action, reason, _rule = classify(c)
        print(f"{action:6} {c.where:40} {c.text}    [{reason}]")
    errors = check_all(run="--static" not in sys.argv)
    for e in errors:
        print("FAIL", e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
