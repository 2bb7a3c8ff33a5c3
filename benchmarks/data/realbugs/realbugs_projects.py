"""The realbugs set's projects and paths: mirrors, work folder, PROJECTS' requirements, MINE's windows, SKIP."""
from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

MIRRORS = Path(os.environ.get("REALBUGS_MIRRORS", "/work/.mirror"))
BUGSINPY = MIRRORS / "soarsmu+BugsInPy" / "repo"
WORK = Path(tempfile.gettempdir()) / "realbugs-work"
MAX_FILE_BYTES = 1 << 20  # drop checked-in build artifacts (youtube-dl.exe)
LEFT_OUT = ("docs/", "doc/")  # top-level documentation folders: no code, and half a workspace's bytes
# The test tools of every case (the bench installs them too: greenloop.bench.realbugs.TEST_TOOLS).
TEST_TOOLS = ["pytest==9.2.0", "pytest-timeout==2.4.0"]
RUN_SECONDS = 600  # one pytest run in its container, at most (the per-test timeout is 60 s)
# Files a project declares its packages in, stored in the workspace as the project had them.
DECLARED = re.compile(r"^(setup\.py|setup\.cfg|pyproject\.toml|Pipfile|tox\.ini|"
                      r"[\w.-]*requirements[\w.-]*\.(txt|in)|requirements/[\w.-]+\.(txt|in))$")

# requirements: what the tests need besides TEST_TOOLS, as versions with a Python 3.11 wheel on
# PyPI (the project's own pins where such a wheel exists; see README "Set-up"). env: variables the
# tests need. init_files: files BugsInPy's setup.sh creates (`touch tests/__init__.py`) or the
# project's install writes (black's `_black_version.py`), {describe} = `git describe --tags`.
# bugsinpy_pins: packages whose version comes from the bug's BugsInPy requirements.txt (the
# project moved between major versions of them across its bugs).
PROJECTS: dict[str, dict] = {
    "youtube-dl": {"mirror": "ytdl-org+youtube-dl",
                   "repo": "https://github.com/ytdl-org/youtube-dl",
                   "license": "Unlicense (public domain)",
                   "requirements": []},
    "tqdm": {"mirror": "tqdm+tqdm", "repo": "https://github.com/tqdm/tqdm",
             "license": "MIT, with parts MPL-2.0 (see LICENCE)",
             "requirements": ["nose==1.3.7"]},
    "PySnooper": {"mirror": "cool-RR+PySnooper",
                  "repo": "https://github.com/cool-RR/PySnooper", "license": "MIT",
                  "requirements": ["python_toolbox==1.3.2", "decorator", "future", "six"]},
    "cookiecutter": {"mirror": "cookiecutter+cookiecutter",
                     "repo": "https://github.com/cookiecutter/cookiecutter",
                     "license": "BSD-3-Clause",
                     # Jinja2 2.x needs MarkupSafe<2.1, which has no 3.11 wheel before 2.1.0;
                     # Jinja2 3.0.3 with MarkupSafe 2.1 is the oldest pair with wheels.
                     "requirements": ["Jinja2==3.0.3", "MarkupSafe==2.1.5", "click<8",
                                      "poyo", "jinja2-time", "python-slugify",
                                      "requests", "binaryornot", "future",
                                      "whichcraft", "pytest-mock", "pytest-cov", "freezegun"]},
    "black": {"mirror": "psf+black", "repo": "https://github.com/psf/black",
              "license": "MIT",
              # declared: click>=6.5 (7.x: black's tests compare click 7's messages), attrs,
              # appdirs, toml, typed-ast (1.4 has no 3.11 wheel: 1.5.5), regex, pathspec,
              # mypy_extensions, typing_extensions; aiohttp (3.6 has no 3.11 wheel: 3.8.6)
              # and aiohttp-cors for blackd, whose tests test_black.py holds
              "requirements": ["aiohttp==3.8.6", "aiohttp-cors==0.7.0", "click==7.1.2", "attrs==19.3.0", "appdirs==1.4.4", "toml==0.10.1",
                               "typed-ast==1.5.5", "regex", "pathspec==0.8.0",
                               "mypy-extensions==0.4.3", "typing-extensions"],
              # _black_version.py is what `pip install -e .` writes (setuptools_scm)
              "init_files": {"tests/__init__.py": "",
                             "_black_version.py": 'version = "{describe}"\n'}},
    "luigi": {"mirror": "spotify+luigi", "repo": "https://github.com/spotify/luigi",
              "license": "Apache-2.0",
              # declared tornado<5/<6 cannot import on 3.10+ (collections ABCs): tornado 6.x
              "requirements": ["tornado==6.2", "python-daemon==2.1.2", "python-dateutil==2.8.1",
                               "mock==4.0.2", "toml==0.10.1", "psutil", "requests==2.23.0",
                               "hypothesis", "boto3", "moto<5"]},
    "tornado": {"mirror": "tornadoweb+tornado", "repo": "https://github.com/tornadoweb/tornado",
                "license": "Apache-2.0", "requirements": []},
    "fastapi": {"mirror": "tiangolo+fastapi", "repo": "https://github.com/tiangolo/fastapi",
                "license": "MIT",
                "requirements": ["requests==2.23.0", "email-validator==1.1.1",
                                 "python-multipart==0.0.6", "aiofiles==0.5.0", "ujson",
                                 "sqlalchemy<2", "pyjwt==1.7.1", "passlib==1.7.2",
                                 # pydantic before 1.10 fails on 3.11 (fields named by
                                 # inspect.Parameter); BugsInPy pins 0.18 to 1.5.1
                                 "pydantic==1.10.13",
                                 # BugsInPy pins starlette 0.10.1 to 0.13.2; 0.13.2 is the
                                 # oldest of them with a wheel
                                 "starlette==0.13.2"]},
    "scrapy": {"mirror": "scrapy+scrapy", "repo": "https://github.com/scrapy/scrapy",
               "license": "BSD-3-Clause",
               # declared Twisted>=17.9 (BugsInPy: 20.3.0, no 3.11 support): 22.10.0
               "requirements": ["Twisted==22.10.0", "lxml", "parsel==1.6.0", "w3lib==1.22.0",
                                "queuelib==1.5.0", "cssselect==1.1.0", "zope.interface",
                                "pyOpenSSL", "cryptography", "service-identity",
                                "PyDispatcher==2.0.7", "protego", "testfixtures",
                                "Pillow", "six", "itemadapter", "itemloaders"]},
    "sanic": {"mirror": "sanic-org+sanic", "repo": "https://github.com/sanic-org/sanic",
              "license": "MIT",
              # setup.py's requirements of BugsInPy's era (httpx 0.11.1, its test client's), with
              # the nearest versions that have 3.11 wheels: websockets<9 and multidict<5 have none
              "requirements": ["httptools", "uvloop", "ujson", "aiofiles", "websockets==10.4",
                               "multidict", "httpx==0.11.1", "beautifulsoup4", "gunicorn",
                               "pytest-benchmark"]},
}
# Bugs mined from the projects' own history (mine.py -> mined.jsonl), ids <project>-git-<sha8>: the
# window of fixed commits searched, and what their tests need instead of PROJECTS' requirements
# (those are the BugsInPy era's). `declared`: add the fixed commit's own pyproject.toml
# [project].dependencies, so the project's pins of its era are kept.
MINE: dict[str, dict] = {
    # pytest-asyncio only where the commit's pytest config uses it (`--asyncio-mode`): before that,
    # tqdm's `-W=error` turns pytest-asyncio 0.24+'s start-up warning into an INTERNALERROR, and
    # 0.23 does not load under pytest 9 ('Package' object has no attribute 'obj')
    "tqdm": {"since": "2019-01-01", "until": "2026-12-31", "requirements": [],
             "if_configured": {"asyncio-mode": ["pytest-asyncio"]},
             # tqdm's tests imported nose's tools until 2020-10-24 ("replace nose => pytest")
             "before": {"2020-10-24": ["nose==1.3.7"]}},
    "PySnooper": {"since": "2019-06-01", "until": "2026-12-31",
                  "requirements": ["python_toolbox", "decorator", "six"]},
    "cookiecutter": {"since": "2019-06-01", "until": "2026-12-31", "declared": True,
                     # jinja2-time: setup.py's install_requires before 2.2 (no [project] table)
                     "requirements": ["Jinja2", "jinja2-time", "click", "binaryornot", "python-slugify", "requests",
                                      "pyyaml", "arrow", "rich", "pytest-mock", "freezegun",
                                      # setup.cfg's addopts --cov; tests/conftest.py imports it
                                      "pytest-cov", "typing-extensions"]},
    "luigi": {"since": "2018-06-01", "until": "2026-12-31", "declared": True,
              # tox.ini's addopts has --cov (pytest-cov); "common" dependency group's test tools
              "requirements": ["tornado", "python-daemon", "python-dateutil", "tenacity",
                               "pytest-cov", "mock", "hypothesis", "psutil", "requests",
                               "responses", "toml", "boto3", "moto", "prometheus-client"]},
    "tornado": {"since": "2019-03-01", "until": "2026-12-31", "requirements": []},
    "fastapi": {"since": "2020-06-01", "until": "2026-12-31", "declared": True,
                # trio: pyproject's filterwarnings names trio's warning class; python-multipart
                # 0.0.13+ warns on `import multipart` (fastapi's import then), an error there
                # requests: starlette's TestClient before 0.21; anyio 4 warns on the
                # `anyio.abc.BlockingPortal` that starlette before 0.21 uses (an error there);
                # httpx 0.28 dropped the `app` argument starlette's TestClient passes before 0.38
                # httpx 0.27 warns on that `app` argument (an error under filterwarnings) too;
                # starlette's TestClient of 2022-10 to 2023 passes it
                "between": [["2022-10-01", "2024-01-01", ["httpx<0.27"]]],
                "requirements": ["trio", "httpx<0.28", "requests", "anyio<4", "python-multipart<0.0.13", "email-validator", "sqlalchemy",
                                 "orjson", "ujson", "pyyaml", "dirty-equals", "passlib", "pyjwt"]},
    "scrapy": {"since": "2021-01-01", "until": "2026-12-31", "declared": True,
               # pyftpdlib (FTP tests) has no wheel: left out, so a bug whose tests need it drops
               "requirements": ["testfixtures", "pexpect", "attrs", "sybil", "Pillow"],
               # pytest-twisted only where tox.ini installs it: before 2026 scrapy's conftest
               # adds its own --reactor option, which pytest-twisted's clashes with
               "if_configured": {"pytest-twisted": ["pytest-twisted"]},
               # w3lib 2.2 (2024-06) removed `w3lib.url._safe_chars`, which scrapy imported then
               "before": {"2024-06-01": ["w3lib<2.2"]}},
    # sanic's setup.py builds its lists from variables (`uvloop`, `ujson`), which
    # declared_dependencies does not evaluate: its install_requires and test extras of 2022-26
    # here, unpinned (pytest-sanic left out: it needs pytest<8)
    "sanic": {"since": "2022-10-01", "until": "2026-12-31",
              "requirements": ["sanic-routing", "httptools", "uvloop", "ujson", "aiofiles",
                               "websockets", "multidict", "html5tagger", "tracerite",
                               "typing-extensions", "setuptools", "sanic-testing", "httpx",
                               "beautifulsoup4", "pytest-benchmark", "chardet<4", "uvicorn"]},
}
# black is not mined: from 2020 its code is under src/, which tests reach only through
# `pip install -e .` (a case cannot record PYTHONPATH for the bench yet).
# httpie is not a project here: with today's PyPI releases of requests and
# pytest-httpbin, its fixed commits fail to import or collect on Python 3.11.
# thefuck is kept out of the development data on purpose.
# Bugs left out after review although they pass the fail/pass check.
SKIP = {
    "cookiecutter-1": "the buggy tree fails only because the fix commit added the "
                      "test fixture tests/test-generate-context/non_ascii.json, which "
                      "BugsInPy's checkout does not copy; under a UTF-8 locale the "
                      "encoding bug itself does not reproduce",
}
