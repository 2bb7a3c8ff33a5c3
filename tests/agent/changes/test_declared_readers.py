"""Where real projects declare what their tests need, read as their own tools read it: flit's and poetry's tables,
setup.py lists built from names and files, tox's substitutions and `-r` files, requirements that include others."""

from __future__ import annotations

from pathlib import Path

from greenloop.agent.changes.declared import declared_packages
from greenloop.agent.changes.declared_pyproject import poetry_constraint
from greenloop.agent.changes.working_copy import WorkingCopy
from greenloop.agent.environment.sources import version_sources


def declared(tmp_path: Path, files: dict[str, str]) -> list[str]:
    return declared_packages(WorkingCopy(tmp_path, {k: v.encode() for k, v in files.items()}))


FLIT = """\
[build-system]
requires = ["flit"]
build-backend = "flit.buildapi"

[tool.flit.metadata]
module = "webapp"
requires = ["starlette ==0.13.6", "pydantic >=1.0.0,<2.0.0"]

[tool.flit.metadata.requires-extra]
test = ["pytest >=4", "requests >=2.24.0,<3.0.0"]
doc = ["mkdocs"]
"""


def test_flits_own_metadata_table_is_read_with_its_test_extra(tmp_path: Path) -> None:
    assert declared(tmp_path, {"pyproject.toml": FLIT}) == [
        "starlette==0.13.6", "pydantic<2.0.0,>=1.0.0", "pytest>=4", "requests<3.0.0,>=2.24.0"]


POETRY = """\
[tool.poetry]
name = "webapp"

[tool.poetry.dependencies]
python = "^3.8"
click = "^7.1"
attrs = "~21.2"
toolz = "*"
six = "1.16.0"
httpx = { version = "^0.23", extras = ["http2"] }
redis = { version = "^4", optional = true }
mylib = { git = "https://example.invalid/mylib.git" }
zeroish = "^0.2.3"

[tool.poetry.dev-dependencies]
pytest-mock = ">=3.0,<4"

[tool.poetry.group.test.dependencies]
freezegun = "^1.2"

[tool.poetry.group.docs.dependencies]
sphinx = "*"
"""


def test_poetrys_tables_and_constraints_are_read_as_pip_ranges(tmp_path: Path) -> None:
    assert declared(tmp_path, {"pyproject.toml": POETRY}) == [
        "click<8.0.0,>=7.1", "attrs<21.3.0,>=21.2", "toolz", "six==1.16.0", "httpx[http2]<0.24.0,>=0.23",
        "zeroish<0.3.0,>=0.2.3", "pytest-mock<4,>=3.0", "freezegun<2.0.0,>=1.2"]
    assert [poetry_constraint(c) for c in ("^0.0.3", "~1", "1.2.*", ">= 1.2, < 2", "^1 || ^2", "^x.y")] == [
        "<0.0.4,>=0.0.3", "<2.0.0,>=1", "==1.2.*", "<2,>=1.2", "", ""]


def test_pdm_uv_hatch_dependency_groups_and_setuptools_files_are_read(tmp_path: Path) -> None:
    pyproject = """\
[project]
name = "webapp"
dynamic = ["dependencies", "optional-dependencies"]

[tool.setuptools.dynamic]
dependencies = { file = ["requirements.in"] }
optional-dependencies.tests = { file = ["tests/requirements.in"] }

[dependency-groups]
lint = ["ruff"]
test = ["coverage", { include-group = "typing" }]
typing = ["mypy"]

[tool.pdm.dev-dependencies]
test = ["pytest-asyncio"]
docs = ["sphinx"]

[tool.uv]
dev-dependencies = ["respx"]

[tool.hatch.envs.default]
dependencies = ["pytest-cov"]

[tool.hatch.envs.lint]
dependencies = ["black"]
"""
    assert declared(tmp_path, {"pyproject.toml": pyproject, "requirements.in": "attrs>=22\n",
                               "tests/requirements.in": "hypothesis\n"}) == [
        "attrs>=22", "hypothesis", "coverage", "mypy", "pytest-asyncio", "respx", "pytest-cov"]


SETUP_PY = """\
import os
from setuptools import setup

marker = '; sys_platform != "win32"' ' and implementation_name == "cpython"'
fast = "uvloop>=0.15" + marker
requirements = ["routing>=23.12", fast, "aiofiles"]
tests_require = ["sanic-testing", "pytest>=7"]
dev_require = tests_require + ["tox"]
extras = {"test": tests_require, "dev": dev_require, "docs": ["sphinx"]}

if os.environ.get("NO_UVLOOP"):
    requirements.remove(fast)  # conditional: not read

kwargs = {"name": "webapp", "packages": ["webapp"]}
kwargs["install_requires"] = requirements
kwargs["extras_require"] = extras
setup(**kwargs)
"""


def test_setup_py_lists_built_from_names_and_a_kwargs_dict_are_read(tmp_path: Path) -> None:
    assert declared(tmp_path, {"setup.py": SETUP_PY}) == [
        "routing>=23.12", "uvloop>=0.15", "aiofiles", "sanic-testing", "pytest>=7", "tox"]


def test_setup_py_requirements_read_from_files_are_read_from_those_files(tmp_path: Path) -> None:
    by_call = ("def read_file(name):\n    with open(name) as f:\n        return f.read()\n\n"
               "setup(name='x', install_requires=read_file('requirements.in'),\n"
               "      extras_require={'tests': {'pytest-timeout'}})\n")
    by_with = ("import setuptools\nwith open('requirements/base.txt') as f:\n    base = f.read().splitlines()\n"
               "setuptools.setup(install_requires=base)\n")
    by_function = ("import os\n\ndef requirements():\n    here = os.path.dirname(__file__)\n"
                   "    return open(os.path.join(here, 'requirements', 'test.txt')).read().split()\n\n"
                   "setup(tests_require=requirements())\n")
    files = {"requirements.in": "decorator>=4\n# comment\n", "requirements/base.txt": "click\n",
             "requirements/test.txt": "freezegun\n"}
    assert declared(tmp_path, {"setup.py": by_call, "requirements.in": files["requirements.in"]}) == [
        "decorator>=4", "pytest-timeout"]
    assert declared(tmp_path, {"setup.py": by_with, "requirements/base.txt": "click\n"}) == ["click"]
    assert declared(tmp_path, {"setup.py": by_function, "requirements/test.txt": "freezegun\n"}) == ["freezegun"]
    # the same setup.py without the file it reads declares nothing
    assert declared(tmp_path, {"setup.py": by_with}) == []


SETUP_PY_CONDITIONS = """\
import os, platform, sys
from setuptools import setup

PY2 = sys.version_info[0] == 2
install_requires = ["python-dateutil>=2.7.5,<3"]
if sys.platform == "nt":
    install_requires.append("python-daemon<2.2.0")
else:
    install_requires.append("python-daemon")
if sys.version_info[:3] >= (3, 5, 2):
    install_requires.append("tornado>=5.0,<7")
else:
    install_requires.append("tornado>=5.0,<6")
if PY2 or sys.version_info < (3, 4):
    install_requires.append("enum34")
elif not platform.system().startswith("Win") and os.name == "posix":
    install_requires.append("uvloop")
if os.environ.get("READTHEDOCS"):  # not a condition on the interpreter: not read
    install_requires.append("sphinx")
tests = ["mock"] if sys.version_info.major < 3 else ["pytest-mock"]
setup(install_requires=install_requires, tests_require=tests)
"""


def test_setup_py_conditions_on_the_interpreter_are_decided_for_this_python_and_others_are_not_read(
        tmp_path: Path) -> None:
    # as luigi's setup.py chose tornado: the branch that holds on this Python (3.11, Linux) is read, and only it
    assert declared(tmp_path, {"setup.py": SETUP_PY_CONDITIONS}) == [
        "python-dateutil<3,>=2.7.5", "python-daemon", "tornado<7,>=5.0", "uvloop", "pytest-mock"]


TOX_INI = """\
[tox]
envlist = py

[test-requirements]
deps =
    attrs
    testfixtures  # the tests' own helpers

[testenv]
extras = testing, http3
deps =
    {[test-requirements]deps}
    -r{toxinidir}/tests/requirements.txt
    pytest >= 8
    py38: mock
    {env:EXTRA_DEPS:}
"""


def test_tox_substitutions_included_files_and_extras_are_read(tmp_path: Path) -> None:
    setup_cfg = ("[options]\ninstall_requires = file: requirements.txt\n"
                 "[options.extras_require]\nhttp3 = aioquic\nlint = ruff\n")
    assert declared(tmp_path, {"tox.ini": TOX_INI, "tests/requirements.txt": "sybil>=1.3\n-r more.txt\n",
                               "tests/more.txt": "pexpect\n", "setup.cfg": setup_cfg,
                               "requirements.txt": "lxml\n"}) == [
        "lxml", "aioquic",  # setup.cfg sorts first; `http3` is an extra tox installs, `lint` is not
        "attrs", "testfixtures", "sybil>=1.3", "pexpect", "pytest>=8"]


def test_requirements_files_follow_their_includes_as_pip_does(tmp_path: Path) -> None:
    # ci/ is no folder of requirements files: its files are read only because one that is includes them
    files = {"requirements-dev.txt": "-r ci/base.txt\npytest==8.3.5 \\\n    --hash=sha256:abc\n",
             "ci/base.txt": "--requirement=common.txt\nclick==8.1.7\n-r ../requirements-dev.txt\n",
             "ci/common.txt": "six==1.16.0\n-c constraints.txt\n-r ../../outside.txt\n",
             "app.py": "x = 1\n"}
    assert declared(tmp_path, files) == ["six==1.16.0", "click==8.1.7", "pytest==8.3.5"]
    [pinned] = version_sources(WorkingCopy(tmp_path, {k: v.encode() for k, v in files.items()}), "3.11")[:1]
    assert pinned.source == "requirements-dev.txt" and pinned.reason == ""
    assert set(pinned.specs) == {"six==1.16.0", "click==8.1.7", "pytest==8.3.5"}


def test_a_package_declared_twice_keeps_its_first_range_with_the_extras_of_both(tmp_path: Path) -> None:
    # as fastapi: pyproject's `anyio` is the first range found, the test requirements add its `[trio]` extra,
    # which the tests need (pip installs the union of a name's extras too)
    pyproject = '[project]\nname = "webapp"\ndependencies = ["anyio>=3.7.1,<4.0.0"]\n'
    assert declared(tmp_path, {"pyproject.toml": pyproject, "requirements-tests.txt": "anyio[trio] >=3.2.1,<4\n"
                               "pywin32; sys_platform == 'win32'\n"}) == ["anyio[trio]<4.0.0,>=3.7.1"]
